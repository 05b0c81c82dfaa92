"""Search indices: the SearchIndex protocol (:mod:`graph.search.protocol`), the one BM25
tokenizer (:mod:`graph.search.tokenize`), the embedded index on disk (:mod:`graph.search.embedded`,
segmented BM25 in :mod:`graph.search.bm25`) and the OpenSearch index (:mod:`graph.search.opensearch`)."""

"""The OpenSearch search index (opensearch-py): chunk BM25, paper BM25 and k-NN chunk search.

Two indices per corpus, ``<prefix>-chunks`` and ``<prefix>-papers``. Both use BM25 with the
configured k1/b in the index settings and a whitespace analyzer over text that is already
tokenized by :func:`graph.search.tokenize.tokenize`, so OpenSearch and the embedded index score the
same terms (Lucene stores document lengths in one byte, so scores differ slightly). Chunk
vectors go into a ``knn_vector`` field (HNSW, Lucene engine, inner product on L2-normalised
vectors = cosine); k-NN search is approximate.

The corpus build keeps its local files (vectors, paper heads: see :mod:`graph.search.embedded`);
this class answers the three search lanes from OpenSearch and delegates the rest (the vectors
the reranker and reader read, paper heads) to them.
"""

from __future__ import annotations

import time
from typing import Any, Optional, Sequence

import numpy as np

from graph.search.embedded import EmbeddedSearchIndex, Hit
from graph.search.tokenize import tokenize


def chunk_index_body(dim: int, k1: float, b: float) -> dict[str, Any]:
    """Settings and mappings of the chunk index."""
    return {
        "settings": {"index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0,
                               "similarity": {"default": {"type": "BM25", "k1": k1, "b": b}}}},
        "mappings": {"properties": {
            "chunk_id": {"type": "keyword"}, "paper_id": {"type": "keyword"}, "kind": {"type": "keyword"},
            "page": {"type": "integer"}, "section": {"type": "keyword"}, "object_id": {"type": "keyword"},
            "tokens": {"type": "text", "analyzer": "whitespace"},
            "text": {"type": "text", "index": False},
            "vector": {"type": "knn_vector", "dimension": dim,
                       "method": {"name": "hnsw", "engine": "lucene", "space_type": "innerproduct",
                                  "parameters": {"m": 16, "ef_construction": 128}}},
        }},
    }


def paper_index_body(k1: float, b: float) -> dict[str, Any]:
    """Settings and mappings of the paper index (concatenated chunk text per paper)."""
    return {
        "settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0,
                               "similarity": {"default": {"type": "BM25", "k1": k1, "b": b}}}},
        "mappings": {"properties": {"paper_id": {"type": "keyword"},
                                    "tokens": {"type": "text", "analyzer": "whitespace"}}},
    }


class OpenSearchIndex:
    """SearchIndex whose lanes are answered by OpenSearch (see the module docstring).

    ``client``: an ``opensearchpy.OpenSearch``; ``local``: the corpus build's
    :class:`EmbeddedSearchIndex` (vectors, paper heads).
    """

    def __init__(self, client, prefix: str, local: EmbeddedSearchIndex, candidates: int = 400) -> None:
        self.client = client
        self.prefix = prefix
        self.local = local
        self.candidates = candidates

    def snapshot(self):
        """The local build's snapshot (the servers answer live)."""
        return self.local.snapshot()

    def vectors_of(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """Chunk vectors from the local build (see the module docstring)."""
        return self.local.vectors_of(chunk_ids)

    def chunk_dense_many(self, query_vectors: np.ndarray, k: int) -> list[list[Hit]]:
        """One k-NN search per query vector (OpenSearch has no shared scan)."""
        return [self.chunk_dense(q, k) for q in query_vectors]

    def paper_head(self, paper_id: str, chars: int) -> str:
        return self.local.paper_head(paper_id, chars)

    # -- loading ---------------------------------------------------------------------------
    def load(self, chunks: Sequence, paper_ids: Sequence[str], paper_texts: Sequence[str], vectors: np.ndarray,
             k1: float = 1.5, b: float = 0.75) -> dict[str, float]:
        """(Re)create both indices and bulk-load them. ``chunks``: Chunk records in the order
        of ``vectors``. Returns seconds and documents per second."""
        from opensearchpy import helpers

        t0 = time.perf_counter()
        ci, pi = f"{self.prefix}-chunks", f"{self.prefix}-papers"
        for name, body in ((ci, chunk_index_body(vectors.shape[1], k1, b)), (pi, paper_index_body(k1, b))):
            if self.client.indices.exists(index=name):
                self.client.indices.delete(index=name)
            self.client.indices.create(index=name, body=body)
        actions = ({"_index": ci, "_id": c.chunk_id, "_source": {
            "chunk_id": c.chunk_id, "paper_id": c.paper_id, "kind": c.kind, "page": c.page, "section": c.section,
            "object_id": c.object_id, "tokens": " ".join(tokenize(c.text)), "text": c.text,
            "vector": [float(x) for x in v]}} for c, v in zip(chunks, vectors))
        n_chunks, _ = helpers.bulk(self.client, actions, chunk_size=500, request_timeout=120)
        papers = ({"_index": pi, "_id": pid, "_source": {"paper_id": pid, "tokens": " ".join(tokenize(t))}}
                  for pid, t in zip(paper_ids, paper_texts))
        n_papers, _ = helpers.bulk(self.client, papers, chunk_size=50, request_timeout=120)
        self.client.indices.refresh(index=f"{ci},{pi}")
        secs = time.perf_counter() - t0
        return {"seconds": secs, "docs": n_chunks + n_papers, "docs_per_s": (n_chunks + n_papers) / secs}

    def count(self) -> dict[str, int]:
        """Documents per index (for `lit3r doctor`)."""
        return {kind: self.client.count(index=f"{self.prefix}-{kind}")["count"] for kind in ("chunks", "papers")}

    # -- search ----------------------------------------------------------------------------
    def _match(self, index: str, field: str, query: str, k: int) -> list[Hit]:
        toks = tokenize(query)
        if not toks:
            return []
        body = {"size": k, "_source": [field], "query": {"match": {"tokens": " ".join(toks)}}}
        hits = self.client.search(index=index, body=body)["hits"]["hits"]
        return [(h["_source"][field], float(h["_score"])) for h in hits]

    def chunk_bm25(self, query: str, k: int) -> list[Hit]:
        """Top-k chunks by BM25 from OpenSearch."""
        return self._match(f"{self.prefix}-chunks", "chunk_id", query, k)

    def paper_bm25(self, query: str, k: int) -> list[Hit]:
        """Top-k papers by BM25 over their concatenated chunk text, from OpenSearch."""
        return self._match(f"{self.prefix}-papers", "paper_id", query, k)

    def chunk_dense(self, query_vector: np.ndarray, k: int) -> list[Hit]:
        """Top-k chunks by approximate k-NN (HNSW) from OpenSearch."""
        # HNSW is approximate: ask the graph for more candidates than needed (Lucene's
        # num_candidates = k here), then keep the top k, which brings recall close to exact search
        candidates = max(k, self.candidates)
        body = {"size": k, "_source": ["chunk_id"],
                "query": {"knn": {"vector": {"vector": [float(x) for x in query_vector], "k": candidates}}}}
        hits = self.client.search(index=f"{self.prefix}-chunks", body=body)["hits"]["hits"]
        return [(h["_source"]["chunk_id"], float(h["_score"])) for h in hits]


def make_client(url: str, user: Optional[str] = None, password: Optional[str] = None, verify_certs: bool = True):
    """An ``opensearchpy.OpenSearch`` client with retries on timeouts and connection errors."""
    from opensearchpy import OpenSearch

    auth = (user, password) if user else None
    return OpenSearch(hosts=[url], http_auth=auth, verify_certs=verify_certs, ssl_show_warn=False,
                      retry_on_timeout=True, max_retries=3, timeout=60)

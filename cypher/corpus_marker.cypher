// The OpenSearch index prefix this database's corpus is loaded with (no row: none recorded).
MATCH (m:Lit3rCorpus) RETURN m.index_prefix AS index_prefix LIMIT 1

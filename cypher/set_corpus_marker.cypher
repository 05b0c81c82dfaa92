// Record the OpenSearch index prefix of this database's corpus (one database holds one corpus). $index_prefix
MERGE (m:Lit3rCorpus {id: 'corpus'}) SET m.index_prefix = $index_prefix

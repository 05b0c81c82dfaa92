// Forget which OpenSearch indices this database's corpus was loaded with, so that the next load
// may pair it with others (the fix a servers-mismatch error names). No parameters.
MATCH (m:Lit3rCorpus) DELETE m

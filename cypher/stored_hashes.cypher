// Every paper with its content hash (null: written by a load that did not finish) and the hash
// of its SIMILAR_TO list. No parameters.
MATCH (p:Paper)
RETURN p.paper_id AS paper_id, p.hash AS hash, p.neighbours_hash AS neighbours_hash

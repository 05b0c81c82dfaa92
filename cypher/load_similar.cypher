// Replace the SIMILAR_TO lists of papers (paper-embedding kNN: SPECTER2 in the seed system).
// $rows: [{paper_id, neighbours_hash, neighbours: [{neighbour_id, score, rank}]}]
UNWIND $rows AS row
MATCH (a:Paper {paper_id: row.paper_id})
CALL (a) { MATCH (a)-[s:SIMILAR_TO]->() DELETE s }
CALL (a, row) { UNWIND row.neighbours AS n
       MATCH (b:Paper {paper_id: n.neighbour_id})
       CREATE (a)-[:SIMILAR_TO {score: n.score, rank: n.rank}]->(b) }
SET a.neighbours_hash = row.neighbours_hash

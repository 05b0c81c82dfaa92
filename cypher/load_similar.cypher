// $rows: [{paper_id, neighbour_id, score, rank}]: paper-embedding kNN (SPECTER2 in the seed system)
UNWIND $rows AS row
MATCH (a:Paper {paper_id: row.paper_id}), (b:Paper {paper_id: row.neighbour_id})
MERGE (a)-[s:SIMILAR_TO]->(b)
SET s.score = row.score, s.rank = row.rank

// $rows: [{paper_id, authors: [name, ...]}]; position is the author order (1-based).
UNWIND $rows AS row
MATCH (p:Paper {paper_id: row.paper_id})
UNWIND range(0, size(row.authors) - 1) AS i
MERGE (a:Author {name: row.authors[i]})
MERGE (p)-[r:AUTHORED_BY]->(a)
SET r.position = i + 1

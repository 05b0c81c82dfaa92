// One paper with its authors in order. $paper_id
MATCH (p:Paper {paper_id: $paper_id})
OPTIONAL MATCH (p)-[r:AUTHORED_BY]->(a:Author)
WITH p, a ORDER BY r.position
RETURN p {.*} AS paper, [x IN collect(a.name) WHERE x IS NOT NULL] AS authors

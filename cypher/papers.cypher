// Papers by id with their authors in order (unknown ids give no row). $ids
UNWIND $ids AS id
MATCH (p:Paper {paper_id: id})
CALL (p) { OPTIONAL MATCH (p)-[r:AUTHORED_BY]->(a:Author) WITH a ORDER BY r.position
       RETURN [x IN collect(a.name) WHERE x IS NOT NULL] AS authors }
RETURN p {.*} AS paper, authors

// The chunk nodes of each paper (papers without chunks left out): what a load finds on the server. No parameters.
MATCH (p:Paper)-[:HAS_CHUNK]->(c:Chunk) RETURN p.paper_id AS paper_id, count(c) AS n

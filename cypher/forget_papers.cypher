// Before (re)writing papers: mark them unfinished (hash null) and delete their chunks, CITES
// and AUTHORED_BY edges. Idempotent. $ids
UNWIND $ids AS id
MATCH (p:Paper {paper_id: id})
REMOVE p.hash
WITH p
CALL (p) { MATCH (p)-[:HAS_CHUNK]->(c:Chunk) DETACH DELETE c }
CALL (p) { MATCH (p)-[r:CITES|AUTHORED_BY]->() DELETE r }
RETURN count(p) AS forgotten

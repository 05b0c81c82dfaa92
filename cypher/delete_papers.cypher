// Delete papers with their chunks and every edge (pruned from the corpus). $ids
UNWIND $ids AS id
MATCH (p:Paper {paper_id: id})
CALL (p) { MATCH (p)-[:HAS_CHUNK]->(c:Chunk) DETACH DELETE c }
DETACH DELETE p
RETURN count(*) AS deleted

// A question's evidence trace drawn as a graph (Neo4j Browser): the Question, its answer and
// the evidence chunks and papers it is supported by, the papers holding the chunks, the
// subqueries that pooled them, and the Relate seeds. $query_id=null, $run=null
MATCH (q:Question)
WHERE ($query_id IS NULL OR q.query_id = $query_id) AND ($run IS NULL OR q.run = $run)
WITH q ORDER BY q.stored_at DESC, q.key DESC LIMIT 1
MATCH answer = (q)-[:HAS_ANSWER]->(:Answer)-[:SUPPORTED_BY]->(x)
OPTIONAL MATCH held = (x:Chunk)<-[:HAS_CHUNK]-(:Paper)
OPTIONAL MATCH pooled = (q)-[:HAS_ROUND]->(:Round)-[:HAS_SUBQUERY]->(:Subquery)-[:POOLED]->(x:Chunk)
OPTIONAL MATCH seeds = (q)-[:SEED]->(:Paper)
RETURN answer, held, pooled, seeds

// A question's evidence path: from the Question to every evidence chunk of its answer
// (SUPPORTED_BY), the paper holding the chunk with its final candidate rank, and the subqueries
// whose pool the chunk was in (round, subquery, rank, score). The newest question of that id
// when $run is null (the newest of all when $query_id is null too). $query_id=null, $run=null
MATCH (q:Question)
WHERE ($query_id IS NULL OR q.query_id = $query_id) AND ($run IS NULL OR q.run = $run)
WITH q ORDER BY q.stored_at DESC, q.key DESC LIMIT 1
MATCH (q)-[:HAS_ANSWER]->(:Answer)-[e:SUPPORTED_BY]->(c:Chunk)
OPTIONAL MATCH (p:Paper)-[:HAS_CHUNK]->(c)
OPTIONAL MATCH (q)-[cand:CANDIDATE]->(p)
CALL (q, c) {
  OPTIONAL MATCH (q)-[:HAS_ROUND]->(r:Round)-[:HAS_SUBQUERY]->(s:Subquery)-[pl:POOLED]->(c)
  WITH r, s, pl ORDER BY r.round, s.index
  RETURN collect(CASE WHEN s IS NULL THEN null ELSE
                 {round: r.round, subquery: s.index, query: s.query, rank: pl.rank, score: pl.score} END) AS pooled_by
}
RETURN q.run AS run, q.query_id AS query_id, q.text AS question, e.rank AS rank, c.chunk_id AS chunk_id,
       p.paper_id AS paper_id, cand.rank AS candidate_rank, pooled_by
ORDER BY rank, chunk_id

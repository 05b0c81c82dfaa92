// One question's trace: its rounds with their subqueries, the Relate seeds and the answer (the
// newest question of that id when $run is null; the newest of all when $query_id is null too).
// $query_id=null, $run=null
MATCH (q:Question)
WHERE ($query_id IS NULL OR q.query_id = $query_id) AND ($run IS NULL OR q.run = $run)
WITH q ORDER BY q.stored_at DESC, q.key DESC LIMIT 1
CALL (q) {
  OPTIONAL MATCH (q)-[:HAS_ROUND]->(r:Round)
  OPTIONAL MATCH (r)-[:HAS_SUBQUERY]->(s:Subquery)
  WITH r, s ORDER BY r.round, s.index
  WITH r, collect(CASE WHEN s IS NULL THEN null ELSE
                  {index: s.index, query: s.query, prf_query: s.prf_query, pooled: s.pooled} END) AS subqueries
  ORDER BY r.round
  RETURN collect(CASE WHEN r IS NULL THEN null ELSE
                 {round: r.round, pool_size: r.pool_size, verdict: r.verdict, subqueries: subqueries} END) AS rounds
}
CALL (q) {
  OPTIONAL MATCH (q)-[s:SEED]->(p:Paper)
  WITH s, p ORDER BY s.rank, p.paper_id
  RETURN collect(p.paper_id) AS seeds
}
OPTIONAL MATCH (q)-[:HAS_ANSWER]->(a:Answer)
RETURN q.run AS run, q.query_id AS query_id, q.text AS text, q.stored_at AS stored_at, rounds, seeds,
       a {.reader, .text, .choice, .papers, .evidence_chunks, .validation} AS answer

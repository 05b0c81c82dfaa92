// Why a paper is a candidate of a question: its final, Ranking A and Ranking B ranks, the
// Relate sources that brought it into Ranking B (similar, coupling, paper_bm25, with its rank
// there), whether it is a seed, its SIMILAR_TO and coupling links to the seeds, and how many of
// its chunks were pooled and are evidence. Every candidate when $paper_id is null.
// $query_id=null, $run=null, $paper_id=null
MATCH (q:Question)
WHERE ($query_id IS NULL OR q.query_id = $query_id) AND ($run IS NULL OR q.run = $run)
WITH q ORDER BY q.stored_at DESC, q.key DESC LIMIT 1
MATCH (q)-[cand:CANDIDATE]->(p:Paper)
WHERE $paper_id IS NULL OR p.paper_id = $paper_id
OPTIONAL MATCH (q)-[seed:SEED]->(p)
CALL (q, p) {
  OPTIONAL MATCH (q)-[rel:RELATED]->(p)
  WITH rel ORDER BY rel.source
  RETURN collect(CASE WHEN rel IS NULL THEN null ELSE {source: rel.source, rank: rel.rank} END) AS sources
}
CALL (q, p) {
  OPTIONAL MATCH (q)-[:SEED]->(s:Paper)-[sim:SIMILAR_TO]->(p)
  WITH s, sim ORDER BY s.paper_id
  RETURN collect(CASE WHEN sim IS NULL THEN null ELSE {seed: s.paper_id, rank: sim.rank, score: sim.score} END)
         AS similar_to_seeds
}
CALL (q, p) {
  OPTIONAL MATCH (q)-[:SEED]->(s:Paper)-[:CITES]->(w:Work)<-[:CITES]-(p) WHERE s <> p
  WITH s, count(DISTINCT w) AS shared ORDER BY s.paper_id
  RETURN collect(CASE WHEN s IS NULL THEN null ELSE {seed: s.paper_id, shared: shared} END) AS coupled_seeds
}
CALL (q, p) {
  OPTIONAL MATCH (q)-[:HAS_ROUND]->(:Round)-[:HAS_SUBQUERY]->(:Subquery)-[:POOLED]->(c:Chunk)<-[:HAS_CHUNK]-(p)
  RETURN count(DISTINCT c) AS pooled_chunks
}
CALL (q, p) {
  OPTIONAL MATCH (q)-[:HAS_ANSWER]->(:Answer)-[:SUPPORTED_BY]->(c:Chunk)<-[:HAS_CHUNK]-(p)
  RETURN count(DISTINCT c) AS evidence_chunks
}
RETURN p.paper_id AS paper_id, p.title AS title, cand.rank AS rank, cand.rank_a AS rank_a, cand.score_a AS score_a,
       cand.rank_b AS rank_b, sources, seed.rank AS seed_rank, similar_to_seeds, coupled_seeds, pooled_chunks,
       evidence_chunks
ORDER BY rank, rank_a, rank_b, paper_id

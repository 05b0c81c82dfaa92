// Relate, source 1: SIMILAR_TO neighbours of a seed, best first. $paper_id, $limit=10
MATCH (:Paper {paper_id: $paper_id})-[s:SIMILAR_TO]->(n:Paper)
RETURN n.paper_id AS paper_id, s.score AS score
ORDER BY s.rank
LIMIT $limit

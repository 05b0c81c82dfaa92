// Exploration: co-citation: works most often cited together with a paper (by the same citing
// corpus papers). $paper_id, $limit=25
MATCH (c:Paper)-[:CITES]->(:Paper {paper_id: $paper_id})
MATCH (c)-[:CITES]->(w:Work)
WHERE NOT (w:Paper AND w.paper_id = $paper_id)
RETURN w.work_id AS work_id, coalesce(w.title, w.work_id) AS title, count(DISTINCT c) AS cocited_by
ORDER BY cocited_by DESC, work_id
LIMIT $limit

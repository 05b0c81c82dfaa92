// Browser guide: a paper's SIMILAR_TO neighbours (paper-embedding kNN, rank and cosine on the
// edges) and the citations among them; the most cited corpus paper when $paper_id is null.
// $paper_id=null
MATCH (p:Paper)
WHERE $paper_id IS NULL OR p.paper_id = $paper_id
WITH p ORDER BY COUNT { (:Paper)-[:CITES]->(p) } DESC, p.paper_id LIMIT 1
MATCH s = (p)-[:SIMILAR_TO]->(n:Paper)
OPTIONAL MATCH c = (n)-[:CITES]-(p)
RETURN s, c

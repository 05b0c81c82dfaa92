// Browser guide: bibliographic coupling of a paper drawn as a graph: its most coupled papers
// (most shared cited works, then id) with the works both cite; the most cited corpus paper
// when $paper_id is null. $paper_id=null, $coupled=5
MATCH (p:Paper)
WHERE $paper_id IS NULL OR p.paper_id = $paper_id
WITH p ORDER BY COUNT { (:Paper)-[:CITES]->(p) } DESC, p.paper_id LIMIT 1
MATCH (p)-[:CITES]->(w:Work)<-[:CITES]-(o:Paper)
WHERE o <> p
WITH p, o, count(DISTINCT w) AS shared ORDER BY shared DESC, o.paper_id LIMIT toInteger($coupled)
MATCH path = (p)-[:CITES]->(:Work)<-[:CITES]-(o)
RETURN path, shared

// Browser guide: the citation graph among corpus papers (CITES edges that resolve to a corpus
// paper), most cited papers first. $limit=200
MATCH (a:Paper)-[r:CITES]->(b:Paper)
WITH a, r, b ORDER BY COUNT { (:Paper)-[:CITES]->(b) } DESC, b.paper_id, a.paper_id
RETURN a, r, b
LIMIT toInteger($limit)

// Papers whose id, title or an author name contains $text (case-insensitive; null: every paper),
// by id, with their authors in order. $text=null, $limit=1000
MATCH (p:Paper)
CALL (p) { OPTIONAL MATCH (p)-[r:AUTHORED_BY]->(a:Author) WITH a ORDER BY r.position
       RETURN [x IN collect(a.name) WHERE x IS NOT NULL] AS authors }
WITH p, authors
WHERE $text IS NULL OR toLower(p.paper_id) CONTAINS toLower($text)
   OR toLower(coalesce(p.title, '')) CONTAINS toLower($text)
   OR any(name IN authors WHERE toLower(name) CONTAINS toLower($text))
RETURN p {.*} AS paper, authors
ORDER BY p.paper_id
LIMIT $limit

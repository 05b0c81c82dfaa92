// Browser guide: the citation neighbourhood of a paper drawn as a graph: corpus papers it
// cites and that cite it, and its authors. The most cited corpus paper when $paper_id is null.
// $paper_id=null
MATCH (p:Paper)
WHERE $paper_id IS NULL OR p.paper_id = $paper_id
WITH p ORDER BY COUNT { (:Paper)-[:CITES]->(p) } DESC, p.paper_id LIMIT 1
OPTIONAL MATCH cites = (p)-[:CITES]->(:Paper)
OPTIONAL MATCH cited_by = (:Paper)-[:CITES]->(p)
OPTIONAL MATCH authors = (p)-[:AUTHORED_BY]->(:Author)
RETURN p, cites, cited_by, authors

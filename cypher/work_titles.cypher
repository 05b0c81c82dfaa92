// The titles of cited works: of the references citing each, the first with a title (by citing
// paper id, then reference number), as the embedded store picks it: `lit3r graph coupling` and
// `graph path` show works by title. $ids
UNWIND $ids AS id
MATCH (p:Paper)-[r:CITES]->(w:Work {work_id: id})
WHERE r.title IS NOT NULL AND r.title <> ''
WITH w, r ORDER BY p.paper_id, r.number
RETURN w.work_id AS work_id, head(collect(r.title)) AS title

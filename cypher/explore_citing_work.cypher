// Exploration: corpus papers citing a work, found by work id or by a piece of its title. $work
MATCH (p:Paper)-[r:CITES]->(w:Work)
WHERE w.work_id = $work OR toLower(coalesce(w.title, '')) CONTAINS toLower($work)
RETURN p.paper_id AS paper_id, p.title AS title, r.number AS reference_number, w.work_id AS work_id
ORDER BY paper_id

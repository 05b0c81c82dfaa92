// The reference list of a paper: number, work id, cited corpus paper (or null). $paper_id
MATCH (:Paper {paper_id: $paper_id})-[r:CITES]->(w:Work)
RETURN r.number AS number, w.work_id AS work_id, CASE WHEN w:Paper THEN w.paper_id END AS cited_paper_id
ORDER BY number

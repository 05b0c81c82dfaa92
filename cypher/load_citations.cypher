// $rows: [{paper_id, number, page, raw, title, work_id, cited_paper_id}], one per (paper_id, number,
// work_id) (the caller keeps the last of repeated ones). Works are merged by work_id; a resolved
// reference ("paper:<id>") lands on the corpus paper. The paper's CITES edges were deleted first
// (forget_papers), so the edges are created, not merged.
UNWIND $rows AS row
MATCH (p:Paper {paper_id: row.paper_id})
MERGE (w:Work {work_id: row.work_id})
ON CREATE SET w.title = row.title
CREATE (p)-[:CITES {number: row.number, page: row.page, raw: row.raw, title: row.title}]->(w)

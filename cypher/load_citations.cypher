// $rows: [{paper_id, number, page, raw, title, work_id, cited_paper_id}]
// Works are merged by work_id; a resolved reference ("paper:<id>") lands on the corpus paper.
UNWIND $rows AS row
MATCH (p:Paper {paper_id: row.paper_id})
MERGE (w:Work {work_id: row.work_id})
ON CREATE SET w.title = row.title
MERGE (p)-[r:CITES {number: row.number}]->(w)
SET r.page = row.page, r.raw = row.raw, r.title = row.title

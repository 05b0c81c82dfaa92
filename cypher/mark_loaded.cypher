// The last write of a paper: its content hash says that its records are complete. $rows: [{paper_id, hash}]
UNWIND $rows AS row
MATCH (p:Paper {paper_id: row.paper_id})
SET p.hash = row.hash

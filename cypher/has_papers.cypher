// The known paper ids among $ids.
UNWIND $ids AS id
MATCH (p:Paper {paper_id: id})
RETURN p.paper_id AS paper_id

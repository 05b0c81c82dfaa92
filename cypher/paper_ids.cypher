// All paper ids, sorted.
MATCH (p:Paper) RETURN p.paper_id AS paper_id ORDER BY paper_id

// Whether the database holds a Lit3R corpus (one row when it does). No parameters.
MATCH (p:Paper) RETURN p.paper_id AS paper_id LIMIT 1

// Every chunk (for warm caches). No parameters.
MATCH (c:Chunk) RETURN c {.*} AS chunk ORDER BY c.paper_id, c.seq

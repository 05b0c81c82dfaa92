// The chunks of a paper in reading order. $paper_id
MATCH (:Paper {paper_id: $paper_id})-[:HAS_CHUNK]->(c:Chunk)
RETURN c {.*} AS chunk ORDER BY c.seq

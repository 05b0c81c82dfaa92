// $rows: [{chunk_id, paper_id, kind, page, section, object_id, text, seq, image}]
UNWIND $rows AS row
MATCH (p:Paper {paper_id: row.paper_id})
MERGE (c:Chunk {chunk_id: row.chunk_id})
SET c.paper_id = row.paper_id, c.kind = row.kind, c.page = row.page, c.section = row.section,
    c.object_id = row.object_id, c.text = row.text, c.seq = row.seq, c.image = row.image
MERGE (p)-[:HAS_CHUNK]->(c)

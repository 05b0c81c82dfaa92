// $rows: [{chunk_id, paper_id, kind, page, section, object_id, text, seq, image}]; the paper's
// old chunks were deleted first (forget_papers), so chunks are created, not merged.
UNWIND $rows AS row
MATCH (p:Paper {paper_id: row.paper_id})
CREATE (p)-[:HAS_CHUNK]->(c:Chunk {chunk_id: row.chunk_id, paper_id: row.paper_id, kind: row.kind,
        page: row.page, section: row.section, object_id: row.object_id, text: row.text, seq: row.seq,
        image: row.image})

// $rows: [{paper_id, chunks: [{chunk_id, kind, page, section, object_id, text, seq, image}]}]:
// one paper lookup per paper; its old chunks were deleted first (forget_papers), so chunks
// are created, not merged. Each chunk also gets a label of its kind (TextChunk, TableChunk,
// FigureChunk, EquationChunk, TitleAbstractChunk) for Neo4j Browser's style (cypher/browser/).
UNWIND $rows AS row
MATCH (p:Paper {paper_id: row.paper_id})
UNWIND row.chunks AS c
CREATE (p)-[:HAS_CHUNK]->(n:Chunk:$(CASE c.kind WHEN 'title_abstract' THEN 'TitleAbstractChunk' WHEN 'table' THEN 'TableChunk'
                    WHEN 'figure' THEN 'FigureChunk' WHEN 'equation' THEN 'EquationChunk' ELSE 'TextChunk' END)
        {chunk_id: c.chunk_id, paper_id: row.paper_id, kind: c.kind, page: c.page,
        section: c.section, object_id: c.object_id, text: c.text, seq: c.seq, image: c.image})

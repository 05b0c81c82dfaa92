// Give the chunks of a database loaded before the kind labels existed their kind label
// (TextChunk, TableChunk, FigureChunk, EquationChunk, TitleAbstractChunk; Neo4j Browser's
// style colours chunks by them): `lit3r cypher chunk_kind_labels --write`; idempotent.
MATCH (n:Chunk)
WHERE NOT (n:TextChunk OR n:TableChunk OR n:FigureChunk OR n:EquationChunk OR n:TitleAbstractChunk)
SET n:$(CASE n.kind WHEN 'title_abstract' THEN 'TitleAbstractChunk' WHEN 'table' THEN 'TableChunk'
                    WHEN 'figure' THEN 'FigureChunk' WHEN 'equation' THEN 'EquationChunk' ELSE 'TextChunk' END)
RETURN count(*) AS labelled

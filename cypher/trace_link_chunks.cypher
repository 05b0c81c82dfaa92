// Write edges from trace nodes to corpus chunks: $rows: [{src, type, dst, props}]; returns the
// chunk ids that are not in the corpus (no edge for them).
UNWIND $rows AS row
MATCH (a:Trace {key: row.src})
OPTIONAL MATCH (c:Chunk {chunk_id: row.dst})
CALL (a, c, row) { WITH a, c, row WHERE c IS NOT NULL CREATE (a)-[r:$(row.type)]->(c) SET r += row.props }
WITH row, c WHERE c IS NULL
RETURN DISTINCT row.dst AS missing

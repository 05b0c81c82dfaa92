// Write edges from trace nodes to corpus papers: $rows: [{src, type, dst, props}]; returns the
// paper ids that are not in the corpus (no edge for them).
UNWIND $rows AS row
MATCH (a:Trace {key: row.src})
OPTIONAL MATCH (p:Paper {paper_id: row.dst})
CALL (a, p, row) { WITH a, p, row WHERE p IS NOT NULL CREATE (a)-[r:$(row.type)]->(p) SET r += row.props }
WITH row, p WHERE p IS NULL
RETURN DISTINCT row.dst AS missing

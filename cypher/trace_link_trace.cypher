// Write edges between trace nodes: $rows: [{src, type, dst, props}] (types of graph/trace.py).
UNWIND $rows AS row
MATCH (a:Trace {key: row.src})
MATCH (b:Trace {key: row.dst})
CREATE (a)-[r:$(row.type)]->(b)
SET r += row.props

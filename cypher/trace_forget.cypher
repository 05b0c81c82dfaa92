// Delete the traces of questions before they are written again (graph/neo4j_trace.py). $keys
UNWIND $keys AS key
MATCH (t:Trace {question: key})
DETACH DELETE t
RETURN count(*) AS deleted

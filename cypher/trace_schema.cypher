// Evidence-trace schema (Neo4j 5): every trace node is a :Trace with a unique key; lookups by
// run (delete a run) and by question key (replace one question's trace). Idempotent.
CREATE CONSTRAINT trace_key IF NOT EXISTS FOR (t:Trace) REQUIRE t.key IS UNIQUE;
CREATE INDEX trace_run IF NOT EXISTS FOR (t:Trace) ON (t.run);
CREATE INDEX trace_question IF NOT EXISTS FOR (t:Trace) ON (t.question);
CREATE INDEX trace_query_id IF NOT EXISTS FOR (t:Trace) ON (t.query_id)

// The stored question traces, newest first: run, query id, question text, when it was stored,
// evidence chunks of its answer. $run=null
MATCH (q:Question)
WHERE $run IS NULL OR q.run = $run
RETURN q.run AS run, q.query_id AS query_id, q.text AS text, q.stored_at AS stored_at
ORDER BY stored_at DESC, run DESC, query_id DESC

// Write trace nodes (graph/trace.py): $rows: [{key, label, props}] with label one of Question,
// Round, Subquery, Answer (checked by the caller: labels are not user input).
UNWIND $rows AS row
MERGE (t:Trace {key: row.key})
SET t:$(row.label), t += row.props

// Delete every trace node of one run with its edges (`lit3r trace delete RUN`); the corpus
// nodes they pointed at stay. $run
MATCH (t:Trace {run: $run})
DETACH DELETE t
RETURN count(*) AS deleted

// Mark up to $batch papers unfinished (run until it returns 0): the OpenSearch indices were
// recreated, so every paper must be written again, and a load killed meanwhile must know it.
MATCH (p:Paper) WHERE p.hash IS NOT NULL
WITH p LIMIT $batch
REMOVE p.hash
RETURN count(*) AS cleared

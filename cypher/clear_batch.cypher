// Delete up to $batch Lit3R nodes (run until it returns 0): papers, chunks, works, authors.
MATCH (n) WHERE n:Paper OR n:Chunk OR n:Work OR n:Author
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted

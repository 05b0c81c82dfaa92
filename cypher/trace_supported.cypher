// Every question a chunk or a paper supported: the answers with a SUPPORTED_BY edge to the
// chunk, to the paper or to one of its chunks (via: the chunk or paper id); every supported
// answer when $id is null. $id=null
MATCH (a:Answer)-[e:SUPPORTED_BY]->(x)
WHERE $id IS NULL OR (x:Chunk AND (x.chunk_id = $id OR x.paper_id = $id)) OR (x:Paper AND x.paper_id = $id)
MATCH (q:Question)-[:HAS_ANSWER]->(a)
RETURN q.run AS run, q.query_id AS query_id, q.text AS question, coalesce(x.chunk_id, x.paper_id) AS via,
       e.rank AS rank
ORDER BY run, query_id, rank, via

// {chunk_id, paper_id} for the known chunk ids. $ids
UNWIND $ids AS id
MATCH (c:Chunk {chunk_id: id})
RETURN c.chunk_id AS chunk_id, c.paper_id AS paper_id

// Chunks by id (unknown ids give no row). $ids
UNWIND $ids AS id
MATCH (c:Chunk {chunk_id: id})
RETURN c {.*} AS chunk

// One chunk. $chunk_id
MATCH (c:Chunk {chunk_id: $chunk_id}) RETURN c {.*} AS chunk

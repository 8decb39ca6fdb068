// Chunks of long memories (pipelines.ingest.encode): the span of the memory's text, the text
// (full-text entry), the embedding and the late-interaction token vectors; CHUNK_OF its memory.
UNWIND $rows AS row
MATCH (m:Memory {space: $space, id: row.memory})
CREATE (c:Chunk {space: $space, id: row.id})
SET c.memory_id = row.memory, c.index = row.index, c.start = row.start, c.end = row.end,
    c.text = row.text, c.space_tag = $space_tag, c.token_vectors = row.tokens,
    c.token_format = row.token_format
SET m.chunk_count = row.of
WITH c, m, row
CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
CREATE (c)-[:CHUNK_OF]->(m)
RETURN count(c) AS chunks

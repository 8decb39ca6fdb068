// Tests only: the chunks of one memory of the space, in order.
MATCH (c:Chunk {space: $space, memory_id: $memory})-[:CHUNK_OF]->(m:Memory {space: $space})
RETURN c.id AS id, c.index AS index, c.start AS start, c.end AS end, c.text AS text,
       c.embedding IS NOT NULL AS embedded, c.token_format AS token_format,
       size(c.token_vectors) AS token_bytes, c.space_tag AS space_tag, m.chunk_count AS of
ORDER BY index

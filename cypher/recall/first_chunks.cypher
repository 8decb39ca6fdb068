// The first chunk of each of some long memories of the space (what one shows when no chunk of
// it matched the query): its span of the memory's text.
UNWIND $ids AS id
MATCH (c:Chunk {space: $space, memory_id: id})
WHERE c.index = 0
MATCH (c)-[:CHUNK_OF]->(m:Memory {space: $space})
RETURN c.memory_id AS memory_id, c.id AS id, c.index AS index, c.start AS start, c.end AS end,
       coalesce(m.chunk_count, 0) AS of

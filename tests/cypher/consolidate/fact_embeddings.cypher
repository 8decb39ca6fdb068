// Tests only: the space's facts, whether each has an embedding, and its memory.
MATCH (f:Fact {space: $space})
RETURN f.id AS id, f.category AS category, f.text AS text, f.source_id AS source_id,
       f.embedding IS NOT NULL AS embedded
ORDER BY f.id

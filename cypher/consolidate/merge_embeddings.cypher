UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
RETURN m.id AS id, m.embedding AS embedding

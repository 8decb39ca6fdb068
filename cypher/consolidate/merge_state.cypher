// Current state of a planned merge's memories, read inside the writing transaction.
UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
RETURN m.id AS id, m.status AS status, m.restatements AS restatements,
       m.access_count AS access_count, m.heat AS heat, m.importance AS importance

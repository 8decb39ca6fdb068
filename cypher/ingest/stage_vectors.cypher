// The current vectors of some stages of the space (their running mean and its count).
UNWIND $ids AS id
MATCH (s:Stage {space: $space, id: id})
RETURN s.id AS id, s.embedding AS embedding, coalesce(s.embedding_n, 0) AS n

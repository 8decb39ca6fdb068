// Tests only: each memory's token vectors and their format.
MATCH (m:Memory {space: $space})
RETURN m.id AS id, m.token_format AS token_format, m.token_vectors AS tokens
ORDER BY id

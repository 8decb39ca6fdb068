// Tests only: remove the space's token vectors (as if stored before they existed).
MATCH (m:Memory {space: $space})
REMOVE m.token_vectors, m.token_format
RETURN count(m) AS dropped

// Late-interaction token vectors of the given memories, when stored in $token_format
// (the context reranker's round trip brings them for its window; this reads the rest).
UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
WHERE m.token_format = $token_format
RETURN m.id AS id, m.token_vectors AS tokens

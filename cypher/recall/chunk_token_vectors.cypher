// Late-interaction token vectors of the given chunks of the space (a long memory's best
// matching chunk), when stored in $token_format.
UNWIND $ids AS id
MATCH (c:Chunk {space: $space, id: id})
WHERE c.token_format = $token_format
RETURN c.id AS id, c.token_vectors AS tokens

// Memories of the space without late-interaction token vectors in $token_format, by id after
// the cursor $after (the (space, id) index keeps each page cheap).
MATCH (m:Memory {space: $space})
WHERE m.id > $after AND (m.token_format IS NULL OR m.token_format <> $token_format)
RETURN m.id AS id, m.text AS text, m.speaker AS speaker
ORDER BY m.id
LIMIT $limit

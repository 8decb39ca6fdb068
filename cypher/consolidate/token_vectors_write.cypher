// Store computed token vectors (int8 bytes) and their format. A memory whose text is not the
// text they were computed from (it changed meanwhile) is left for the next run.
UNWIND $rows AS row
MATCH (m:Memory {space: $space, id: row.id})
WHERE m.text = row.text
SET m.token_vectors = row.tokens, m.token_format = $token_format
RETURN count(m) AS written

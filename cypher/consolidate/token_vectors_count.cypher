// How many memories of the space lack token vectors in $token_format.
MATCH (m:Memory {space: $space})
WHERE m.token_format IS NULL OR m.token_format <> $token_format
RETURN count(m) AS pending

// Tests only: remove the full-text space tag of a space's memories (as before migration 0004).
MATCH (m:Memory {space: $space})
REMOVE m.space_tag
RETURN count(m) AS cleared

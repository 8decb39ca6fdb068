// Spaces that still have memories without a full-text space tag (migration 0004's data step).
MATCH (m:Memory)
WHERE m.space_tag IS NULL
RETURN DISTINCT m.space AS space

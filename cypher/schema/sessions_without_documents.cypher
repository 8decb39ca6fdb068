// Spaces that have sessions without a session document (migration 0005's data step).
MATCH (s:Session)
WHERE s.texts IS NULL
RETURN DISTINCT s.space AS space

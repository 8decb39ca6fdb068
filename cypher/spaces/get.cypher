// A live space (one being erased reads as absent).
MATCH (s:Space {id: $space})
WHERE s.erasing IS NULL
RETURN s {.id, .name, .description, .settings, created_at: toString(s.created_at)} AS space

// A live space as a PATCH reads it, inside the transaction that holds its write lock.
MATCH (s:Space {id: $space})
WHERE s.erasing IS NULL
RETURN s {.id, .name, .description, .settings} AS space

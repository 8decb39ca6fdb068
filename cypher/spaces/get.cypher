MATCH (s:Space {id: $space})
RETURN s {.id, .name, .description, .settings, created_at: toString(s.created_at)} AS space

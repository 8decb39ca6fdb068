MATCH (s:Space)
WHERE s.erasing IS NULL AND ($allowed IS NULL OR s.id IN $allowed)
RETURN s {.id, .name, .description, .settings, created_at: toString(s.created_at)} AS space
ORDER BY s.id
SKIP $skip LIMIT $limit

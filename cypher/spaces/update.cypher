// Change a live space's name, description and settings (the caller holds its write lock and
// passes the complete new values). No row: the space does not exist or is being erased.
MATCH (s:Space {id: $space})
WHERE s.erasing IS NULL
SET s.name = $name, s.description = $description, s.settings = $settings
RETURN s {.id, .name, .description, .settings, created_at: toString(s.created_at)} AS space

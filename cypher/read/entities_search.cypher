// Entities of a space, optionally filtered by a name fragment, most mentioned first.
MATCH (e:Entity {space: $space})
WHERE $q IS NULL OR e.key CONTAINS $q OR toLower(e.name) CONTAINS $q
RETURN e {.key, .name, .kind, .mention_count, first_seen: toString(e.first_seen),
          last_seen: toString(e.last_seen)} AS entity
ORDER BY e.mention_count DESC, e.key
SKIP $skip LIMIT $limit

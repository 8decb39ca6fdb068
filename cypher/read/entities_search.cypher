// Entities of a space, optionally filtered by a name fragment, most mentioned first. Aliases
// merged into another entity (entity_merge job) are not listed; their canonical is.
MATCH (e:Entity {space: $space})
WHERE e.merged_into IS NULL AND ($q IS NULL OR e.key CONTAINS $q OR toLower(e.name) CONTAINS $q
      OR any(a IN coalesce(e.aliases, []) WHERE toLower(a) CONTAINS $q))
RETURN e {.key, .name, .kind, .mention_count, aliases: coalesce(e.aliases, []), first_seen: toString(e.first_seen),
          last_seen: toString(e.last_seen)} AS entity
ORDER BY e.mention_count DESC, e.key
SKIP $skip LIMIT $limit

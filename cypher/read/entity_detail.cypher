// One entity with its mentions and co-occurring entities; an alias merged into another entity
// (entity_merge job) answers with its canonical.
MATCH (named:Entity {space: $space, key: $key})
OPTIONAL MATCH (named)-[:ALIAS_OF]->(canonical:Entity)
WITH coalesce(canonical, named) AS e
CALL (e) {
  MATCH (m:Memory)-[mn:MENTIONS]->(e)
  WITH m, mn ORDER BY m.event_time, m.id
  RETURN collect(m {.id, .speaker, .text, .session_id, .stage_id, .status,
                    event_time: toString(m.event_time), count: mn.count})[..$limit] AS mentions
}
CALL (e) {
  MATCH (e)-[r:CO_OCCURS]-(o:Entity)
  WITH o, r ORDER BY r.weight DESC, o.key
  RETURN collect(o {.key, .name, .kind, weight: r.weight})[..$limit] AS cooccurring
}
RETURN e {.key, .name, .kind, .mention_count, aliases: coalesce(e.aliases, []), first_seen: toString(e.first_seen),
          last_seen: toString(e.last_seen)} AS entity, mentions, cooccurring

// slide: Entities
// title: The entity over time
// view: table
// params: entity
// Every memory that mentions the entity, oldest first, with its stage, its status and the
// other entities it names: how what was said about it changed.
MATCH (e:Entity {space: $space})
WHERE coalesce($entity, '') = '' OR e.key = $entity OR toLower(e.name) = toLower($entity)
WITH e ORDER BY e.mention_count DESC, e.key LIMIT 1
MATCH (m:Memory)-[:MENTIONS]->(e)
OPTIONAL MATCH (m)-[:IN_STAGE]->(st:Stage)
RETURN toString(m.event_time) AS time, e.name AS entity, st.name AS stage, m.speaker AS speaker,
       m.text AS text, m.status AS status,
       [(m)-[:MENTIONS]->(o:Entity) WHERE o <> e | o.name] AS also_mentions
ORDER BY m.event_time, m.turn_index
LIMIT 200

// slide: Entities
// title: An entity's neighbourhood
// view: graph
// params: entity
// The entity `$entity` (its key or name; empty: the most mentioned one), the 15 entities it
// co-occurs with most (`CO_OCCURS.weight` counts the memories naming both), its 25 latest
// mentions and the stages they fall in, so the periods it was talked about show as clusters.
MATCH (e:Entity {space: $space})
WHERE coalesce($entity, '') = '' OR e.key = $entity OR toLower(e.name) = toLower($entity)
WITH e ORDER BY e.mention_count DESC, e.key LIMIT 1
CALL (e) {
  MATCH (e)-[c:CO_OCCURS]-(other:Entity)
  WITH c, other ORDER BY c.weight DESC, other.key LIMIT 15
  RETURN collect(c) AS co_occurs, collect(other) AS neighbours
}
CALL (e) {
  MATCH (m:Memory)-[r:MENTIONS]->(e)
  WITH m, r ORDER BY m.event_time DESC LIMIT 25
  OPTIONAL MATCH (m)-[s:IN_STAGE]->(st:Stage)
  RETURN collect(m) AS memories, collect(r) AS mentions, collect(s) AS in_stage,
         collect(DISTINCT st) AS stages
}
RETURN e, co_occurs, neighbours, memories, mentions, in_stage, stages

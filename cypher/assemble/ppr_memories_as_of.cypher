// Phase 2 with $as_of: as assemble/ppr_memories, but valid at $as_of: memories that existed then
// and had not been superseded by then (same rule as assemble/valid_at). Each entity contributes at most $per_entity memories
// (the first its MENTIONS edges yield): an entity mentioned thousands of times would otherwise
// make this query read every one of them (15 s at 100,000 memories). `m` carries no label on
// purpose: with `m:Memory` and the `m.space` test the planner seeks every memory of the space in
// the (space, id) index and probes each for an edge into `e` (12 million db hits, 5.8 s at
// 100,000 memories, against 0.1 s expanding from `e`); only memories have MENTIONS edges.
UNWIND $entities AS x
MATCH (e:Entity {space: $space, key: x.key})
CALL (e) {
  MATCH (e)<-[:MENTIONS]-(m)
  WHERE m.space = $space
    AND ($exclude_stage IS NULL OR m.stage_id IS NULL OR m.stage_id <> $exclude_stage)
    AND NOT m.id IN $exclude_ids
    AND m.event_time <= $as_of AND m.status IN ['active', 'superseded']
    AND ($include_superseded OR (
      NOT EXISTS { (:Memory)-[r:SUPERSEDES]->(m) WHERE r.at IS NULL OR r.at <= $as_of }
      AND (m.status = 'active' OR EXISTS { (:Memory)-[:SUPERSEDES]->(m) })
    ))
  RETURN m
  LIMIT $per_entity
}
WITH m, sum(x.mass) AS score, collect(x.key) AS via
ORDER BY score DESC, m.event_time DESC, m.id
LIMIT $limit
RETURN m.id AS id, m.text AS text, m.speaker AS speaker, m.role AS role,
       m.event_time AS event_time, m.stage_id AS stage_id, m.session_id AS session_id,
       score, via

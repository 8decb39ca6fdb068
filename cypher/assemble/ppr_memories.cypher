// Phase 2: memories scored by the PPR mass of the entities they mention (each entity counted
// once per memory), outside the current stage, valid now: active (plus superseded when
// $include_superseded). With an as_of moment: assemble/ppr_memories_as_of (one statement for
// both planned the as_of branch's SUPERSEDES probes on every row, about 4 ms of 20 at 100,000
// memories, even when the moment was null). Each entity contributes at most $per_entity
// memories (the first its MENTIONS edges yield): an entity mentioned thousands of times would
// otherwise make this query read every one of them (15 s at 100,000 memories). `m` carries no
// label on purpose: with `m:Memory` and the `m.space` test the planner seeks every memory of
// the space in the (space, id) index and probes each for an edge into `e` (12 million db hits,
// 5.8 s at 100,000 memories, against 0.1 s expanding from `e`); only memories have MENTIONS
// edges.
UNWIND $entities AS x
MATCH (e:Entity {space: $space, key: x.key})
CALL (e) {
  MATCH (e)<-[:MENTIONS]-(m)
  WHERE m.space = $space
    AND ($exclude_stage IS NULL OR m.stage_id IS NULL OR m.stage_id <> $exclude_stage)
    AND NOT m.id IN $exclude_ids
    AND (m.status = 'active' OR ($include_superseded AND m.status = 'superseded'))
  RETURN m
  LIMIT $per_entity
}
WITH m, sum(x.mass) AS score, collect(x.key) AS via
ORDER BY score DESC, m.event_time DESC, m.id
LIMIT $limit
RETURN m.id AS id, m.text AS text, m.speaker AS speaker, m.role AS role,
       m.event_time AS event_time, m.stage_id AS stage_id, m.session_id AS session_id,
       score, via, coalesce(m.chunk_count, 0) AS chunk_count

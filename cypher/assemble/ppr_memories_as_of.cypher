// Phase 2 with $as_of and/or $known_at: as assemble/ppr_memories (see there for the per-entity
// bound and the unlabelled `m`), but only memories valid at $as_of as known at $known_at (same
// rule as assemble/valid_at; either may be null).
UNWIND $entities AS x
MATCH (e:Entity {space: $space, key: x.key})
CALL (e) {
  MATCH (e)<-[:MENTIONS]-(m)
  WHERE m.space = $space
    AND ($exclude_stage IS NULL OR m.stage_id IS NULL OR m.stage_id <> $exclude_stage)
    AND NOT m.id IN $exclude_ids
    AND ($as_of IS NULL OR m.event_time <= $as_of)
    AND ($known_at IS NULL OR m.ingested_at <= $known_at)
    AND m.status IN ['active', 'superseded']
    AND ($include_superseded OR (
      NOT EXISTS {
        (:Memory)-[r:SUPERSEDES]->(m)
        WHERE ($as_of IS NULL OR coalesce(r.valid_from, r.at, $as_of) <= $as_of)
          AND ($known_at IS NULL OR coalesce(r.recorded_at, r.at, $known_at) <= $known_at)
      }
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
       score, via, coalesce(m.chunk_count, 0) AS chunk_count

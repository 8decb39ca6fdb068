// Phase 2 with $as_of: as assemble/ppr_memories (see there for the per-entity bound and the
// unlabelled `m`), but valid at $as_of: memories that existed then and had not been superseded
// by then (same rule as assemble/valid_at).
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
       score, via, coalesce(m.chunk_count, 0) AS chunk_count

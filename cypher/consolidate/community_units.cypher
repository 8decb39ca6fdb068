// The units of the space: sessions (with their active memory count, time span, stage, and
// whether all their memories agree with the session's stage) and memories without a session.
CALL () {
  MATCH (s:Session {space: $space})
  CALL (s) {
    MATCH (m:Memory)-[:IN_SESSION]->(s)
    RETURN count(CASE WHEN m.status = 'active' THEN 1 END) AS active,
           min(m.event_time) AS start, max(m.event_time) AS end,
           count(CASE WHEN m.stage_id IS NULL OR m.stage_id <> s.stage_id THEN 1 END) AS astray
  }
  RETURN 'session:' + s.id AS unit, 'session' AS kind, s.id AS ref, s.stage_id AS stage, active,
         coalesce(start, s.started_at).epochMillis AS start,
         coalesce(end, s.ended_at).epochMillis AS end, astray
  UNION ALL
  MATCH (m:Memory {space: $space})
  WHERE NOT EXISTS { (m)-[:IN_SESSION]->(:Session) }
  RETURN 'memory:' + m.id AS unit, 'memory' AS kind, m.id AS ref, m.stage_id AS stage,
         CASE WHEN m.status = 'active' THEN 1 ELSE 0 END AS active,
         m.event_time.epochMillis AS start, m.event_time.epochMillis AS end, 0 AS astray
}
RETURN unit, kind, ref, stage, active, start, end, astray

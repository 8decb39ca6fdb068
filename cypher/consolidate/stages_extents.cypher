// Time extents of derived stages from their memories.
MATCH (s:Stage {space: $space})
WHERE s.kind IN ['gap', 'community']
CALL (s) {
  MATCH (m:Memory)-[:IN_STAGE]->(s)
  RETURN min(m.event_time) AS start, max(m.event_time) AS end
}
WITH s, start, end WHERE start IS NOT NULL
  AND (s.started_at IS NULL OR s.started_at <> start OR s.ended_at <> end)
SET s.started_at = start, s.ended_at = end
RETURN count(s) AS updated

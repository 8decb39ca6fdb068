// Corpus size for the density gate: memories recall may return, and stages.
CALL () {
  MATCH (m:Memory {space: $space})
  WHERE m.status IN $statuses AND ($as_of IS NULL OR m.event_time <= $as_of)
  RETURN count(m) AS memories
}
CALL () {
  MATCH (s:Stage {space: $space})
  WHERE $as_of IS NULL OR s.started_at <= $as_of
  RETURN count(s) AS stages
}
RETURN memories, stages

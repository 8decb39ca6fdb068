// Memories the policy would archive: active, of the policy's kinds, older than the cutoff, not
// important enough to keep and not recalled recently. Their facts and schemas are untouched.
MATCH (m:Memory {space: $space})
WHERE m.status = 'active' AND m.kind IN $kinds AND m.event_time < $cutoff
  AND ($min_importance IS NULL OR coalesce(m.importance, 0.0) < $min_importance)
  AND ($accessed_since IS NULL OR m.last_access IS NULL OR m.last_access < $accessed_since)
RETURN m.id AS id
ORDER BY m.event_time, m.id

// The most recent stage of the space: time-gap detection continues it.
MATCH (s:Stage {space: $space})
RETURN s.id AS key, s.started_at AS start, s.ended_at AS end, s.kind AS kind
ORDER BY s.ended_at DESC, s.id DESC
LIMIT 1

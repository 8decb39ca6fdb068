// TESTS and reports: each session's stage.
MATCH (s:Session {space: $space})
RETURN s.id AS id, s.stage_id AS stage, s.started_at AS start, s.ended_at AS end

// The stage of a session the caller named (null stage: the session has none). Same columns
// as assemble/stages (times as epoch microseconds).
MATCH (se:Session {space: $space, id: $session})
OPTIONAL MATCH (s:Stage {space: $space, id: se.stage_id})
RETURN se.id AS session, s.id AS id, s.name AS name, s.kind AS kind, s.ordinal AS ordinal,
       s.started_at.epochSeconds * 1000000 + s.started_at.microsecond AS started_at_us,
       s.ended_at.epochSeconds * 1000000 + s.ended_at.microsecond AS ended_at_us

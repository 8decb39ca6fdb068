// The stage of a session the caller named (null stage: the session has none).
MATCH (se:Session {space: $space, id: $session})
OPTIONAL MATCH (s:Stage {space: $space, id: se.stage_id})
RETURN se.id AS session, s.id AS id, s.name AS name, s.kind AS kind,
       s.started_at AS started_at, s.ended_at AS ended_at, s.ordinal AS ordinal

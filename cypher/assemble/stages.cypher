// Every stage of the space with its place in time (a space has few stages; no paging).
// $as_of: only stages that had started by then.
MATCH (s:Stage {space: $space})
WHERE $as_of IS NULL OR s.started_at <= $as_of
RETURN s.id AS id, s.name AS name, s.kind AS kind, s.started_at AS started_at,
       s.ended_at AS ended_at, s.ordinal AS ordinal
ORDER BY s.ordinal, s.started_at, s.id

// Every stage of the space with its place in time (a space has few stages; no paging).
// $as_of: only stages that had started by then. Times as epoch microseconds (read on every
// /context call; see pipelines.graph.from_epoch_micros).
MATCH (s:Stage {space: $space})
WHERE $as_of IS NULL OR s.started_at <= $as_of
RETURN s.id AS id, s.name AS name, s.kind AS kind, s.ordinal AS ordinal,
       s.started_at.epochSeconds * 1000000 + s.started_at.microsecond AS started_at_us,
       s.ended_at.epochSeconds * 1000000 + s.ended_at.microsecond AS ended_at_us
ORDER BY s.ordinal, s.started_at, s.id

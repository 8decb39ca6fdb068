// The stage a caller named: by id, by its label key ("label:" + normalised label) or by name.
// Same columns as assemble/stages (times as epoch microseconds).
MATCH (s:Stage {space: $space})
WHERE s.id IN $ids OR s.name = $name
RETURN s.id AS id, s.name AS name, s.kind AS kind, s.ordinal AS ordinal,
       s.started_at.epochSeconds * 1000000 + s.started_at.microsecond AS started_at_us,
       s.ended_at.epochSeconds * 1000000 + s.ended_at.microsecond AS ended_at_us,
       s.id IN $ids AS by_id
ORDER BY by_id DESC, s.id
LIMIT 2

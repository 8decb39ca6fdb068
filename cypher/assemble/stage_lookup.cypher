// The stage a caller named: by id, by its label key ("label:" + normalised label) or by name.
MATCH (s:Stage {space: $space})
WHERE s.id IN $ids OR s.name = $name
RETURN s.id AS id, s.name AS name, s.kind AS kind, s.started_at AS started_at,
       s.ended_at AS ended_at, s.ordinal AS ordinal, s.id IN $ids AS by_id
ORDER BY by_id DESC, s.id
LIMIT 2

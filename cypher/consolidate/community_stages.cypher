// Existing stages (kind, name) of the space.
MATCH (s:Stage {space: $space})
RETURN s.id AS id, s.kind AS kind, s.name AS name

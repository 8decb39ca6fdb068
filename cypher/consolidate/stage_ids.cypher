// The ids of the space's stages.
MATCH (s:Stage {space: $space})
RETURN s.id AS id
ORDER BY id

// Relationships leaving a space's nodes of one label, by type, other end in the space.
MATCH (a:__LABEL__ {space: $space})-[r]->(b)
WHERE b.space = $space AND any(l IN labels(b) WHERE l IN $labels)
RETURN type(r) AS type, count(r) AS n

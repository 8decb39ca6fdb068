// A page (keyset on key) of the space's entity keys.
MATCH (e:Entity {space: $space})
WHERE e.key > $after
RETURN e.key AS key
ORDER BY key
LIMIT $limit

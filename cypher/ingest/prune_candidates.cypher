// Keep at most the space's candidate budget: the oldest sightings go first.
MATCH (x:EntityCandidate {space: $space})
WITH x ORDER BY x.seen, x.key
LIMIT $excess
DELETE x
RETURN count(*) AS pruned

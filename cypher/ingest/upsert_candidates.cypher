// Entity candidates seen in fewer memories than promotion needs: the first memory (and its
// mention count) is remembered, later sightings are counted.
UNWIND $candidates AS c
MERGE (x:EntityCandidate {space: $space, key: c.key})
ON CREATE SET x.name = c.name, x.kind = c.kind, x.memory = c.memory, x.count = c.count,
              x.seen = c.seen, x.sightings = 0, x.created_at = datetime()
SET x.sightings = x.sightings + c.sightings
RETURN count(x) AS candidates

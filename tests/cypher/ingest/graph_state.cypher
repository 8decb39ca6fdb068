// Tests only: a space's entities (with mention and memory counts, whether they carry a vector),
// entity candidates, and co-occurrence edges.
CALL () {
  MATCH (e:Entity {space: $space})
  RETURN collect({key: e.key, mentions: e.mention_count, memories: e.memory_count,
                  vector: e.embedding IS NOT NULL, n: e.embedding_n,
                  embedding: e.embedding}) AS entities
}
CALL () {
  MATCH (c:EntityCandidate {space: $space})
  RETURN collect({key: c.key, memory: c.memory, sightings: c.sightings}) AS candidates
}
CALL () {
  MATCH (a:Entity {space: $space})-[r:CO_OCCURS]->(b:Entity)
  RETURN collect({a: a.key, b: b.key, weight: r.weight}) AS edges
}
CALL () {
  MATCH (s:Stage {space: $space})
  RETURN collect({id: s.id, vector: s.embedding IS NOT NULL, n: s.embedding_n,
                  embedding: s.embedding}) AS stages
}
RETURN entities, candidates, edges, stages

// What the space knows about a batch's entity keys (pipelines.ingest.entity_graph): the
// entities among them (memories mentioning each, and its vector), the candidates among them
// (first memory, its vector), the space's memory count and candidate count.
CALL () { MATCH (m:Memory {space: $space}) RETURN count(m) AS memories }
CALL () { MATCH (c:EntityCandidate {space: $space}) RETURN count(c) AS candidate_count }
CALL () {
  UNWIND $keys AS k
  MATCH (e:Entity {space: $space, key: k})
  RETURN collect({key: k, memories: coalesce(e.memory_count, COUNT { (e)<-[:MENTIONS]-() }),
                  embedding: e.embedding, embedding_n: e.embedding_n}) AS entities
}
CALL () {
  UNWIND $keys AS k
  MATCH (c:EntityCandidate {space: $space, key: k})
  OPTIONAL MATCH (m:Memory {space: $space, id: c.memory})
  RETURN collect({key: k, memory: c.memory, count: c.count, sightings: c.sightings,
                  seen: c.seen, embedding: m.embedding}) AS candidates
}
RETURN memories, candidate_count, entities, candidates

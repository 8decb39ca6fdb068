// What the write path stored in one space (benchmarks/perf_ingest.py): chunks of long memories,
// entity candidates waiting for a second sighting, facts by category, and the vectors kept on
// entities and stages.
CALL () { MATCH (n:Chunk {space: $space}) RETURN count(n) AS chunks }
CALL () { MATCH (n:EntityCandidate {space: $space}) RETURN count(n) AS entity_candidates }
CALL () {
  MATCH (n:Entity {space: $space}) WHERE n.embedding IS NOT NULL
  RETURN count(n) AS entity_vectors
}
CALL () {
  MATCH (n:Stage {space: $space}) WHERE n.embedding IS NOT NULL
  RETURN count(n) AS stage_vectors
}
CALL () {
  MATCH (f:Fact {space: $space}) WHERE f.category = 'instruction'
  RETURN count(f) AS instructions
}
CALL () {
  MATCH (f:Fact {space: $space}) WHERE f.category = 'preference'
  RETURN count(f) AS preferences
}
CALL () {
  MATCH (m:Memory {space: $space})
  RETURN max(size(m.text)) AS longest_memory_chars, sum(size(m.text)) AS text_chars
}
RETURN chunks, entity_candidates, entity_vectors, stage_vectors, instructions, preferences,
       longest_memory_chars, text_chars

// What recall needs to know about a space before it searches: its size (exact scan or
// approximate index), the share of all memories it holds (vector / full-text post-filter
// selectivity), its speakers (to find the ones a query names), its long memories and their
// chunks (none: recall skips the chunk signals) and the chunks of every space.
CALL () {
  MATCH (m:Memory {space: $space})
  RETURN count(m) AS size, collect(DISTINCT m.speaker)[..$max_speakers] AS speakers,
         count(m.chunk_count) AS long_memories
}
CALL () {
  MATCH (m:Memory)
  RETURN count(m) AS total
}
CALL () {
  MATCH (c:Chunk {space: $space})
  RETURN count(c) AS chunks
}
CALL () {
  MATCH (c:Chunk)
  RETURN count(c) AS total_chunks
}
RETURN size, total, speakers, long_memories, chunks, total_chunks

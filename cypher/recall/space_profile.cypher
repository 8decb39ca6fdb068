// What recall needs to know about a space before it searches: its size (exact scan or
// approximate index), the share of all memories it holds (vector / full-text post-filter
// selectivity) and its speakers (to find the ones a query names).
CALL () {
  MATCH (m:Memory {space: $space})
  RETURN count(m) AS size, collect(DISTINCT m.speaker)[..$max_speakers] AS speakers
}
CALL () {
  MATCH (m:Memory)
  RETURN count(m) AS total
}
RETURN size, total, speakers

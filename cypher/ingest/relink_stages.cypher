// Stages in time order: ordinal and a NEXT_STAGE chain (rebuilt; a space has few stages).
MATCH (s:Stage {space: $space})
WITH s ORDER BY s.started_at, s.id
WITH collect(s) AS stages
CALL (stages) {
  UNWIND stages AS s
  OPTIONAL MATCH (s)-[r:NEXT_STAGE]->()
  DELETE r
}
CALL (stages) {
  UNWIND range(0, size(stages) - 1) AS i
  WITH stages[i] AS s, i
  SET s.ordinal = i
}
CALL (stages) {
  UNWIND range(0, size(stages) - 2) AS i
  WITH stages[i] AS a, stages[i + 1] AS b
  MERGE (a)-[:NEXT_STAGE]->(b)
}
RETURN size(stages) AS stages

// Delete one memory and what only it owned: its facts, its mention counts, the co-occurrence
// weight it contributed, entities left without mentions. The turn chain is re-linked.
// Returns the memory's session id: the caller rebuilds that session's document in the same
// transaction (pipelines.session_documents).
MATCH (m:Memory {space: $space, id: $id})
OPTIONAL MATCH (prev:Memory)-[:NEXT]->(m)
OPTIONAL MATCH (m)-[:NEXT]->(nxt:Memory)
FOREACH (_ IN CASE WHEN prev IS NOT NULL AND nxt IS NOT NULL THEN [1] ELSE [] END |
  MERGE (prev)-[:NEXT]->(nxt))
WITH m, m.session_id AS session_id
OPTIONAL MATCH (m)-[mn:MENTIONS]->(e:Entity)
WITH m, session_id, collect({e: e, c: mn.count}) AS ms
CALL (ms) {
  UNWIND ms AS x
  WITH x WHERE x.e IS NOT NULL
  WITH x.e AS e, x.c AS c
  SET e.mention_count = e.mention_count - c
}
CALL (ms) {
  UNWIND ms AS a
  UNWIND ms AS b
  WITH a.e AS a, b.e AS b
  WHERE a IS NOT NULL AND b IS NOT NULL AND a.key < b.key
  MATCH (a)-[r:CO_OCCURS]->(b)
  SET r.weight = r.weight - 1
  WITH r WHERE r.weight <= 0
  DELETE r
}
OPTIONAL MATCH (f:Fact)-[:EXTRACTED_FROM]->(m)
WITH m, session_id, ms, collect(f) AS facts
FOREACH (f IN facts | DETACH DELETE f)
WITH m, session_id, ms, size(facts) AS deleted_facts
DETACH DELETE m
WITH session_id, ms, deleted_facts
CALL (ms) {
  UNWIND ms AS x
  WITH x.e AS e WHERE e IS NOT NULL AND e.mention_count <= 0
  DETACH DELETE e
  RETURN count(*) AS orphaned
}
RETURN 1 AS memories, deleted_facts AS facts, orphaned AS orphaned_entities, session_id

// Delete one memory and what only it owned: its chunks, its facts, the entity candidates it
// was the first sighting of, its mention counts, the co-occurrence weight its paired mentions
// contributed, its embedding's share of its entities' and its stage's mean vectors, and the
// entities left without mentions. The turn chain is re-linked. Returns the memory's session
// id: the caller rebuilds that session's document in the same transaction
// (pipelines.session_documents).
MATCH (m:Memory {space: $space, id: $id})
OPTIONAL MATCH (prev:Memory)-[:NEXT]->(m)
OPTIONAL MATCH (m)-[:NEXT]->(nxt:Memory)
FOREACH (_ IN CASE WHEN prev IS NOT NULL AND nxt IS NOT NULL THEN [1] ELSE [] END |
  MERGE (prev)-[:NEXT]->(nxt))
WITH m, m.session_id AS session_id
OPTIONAL MATCH (m)-[mn:MENTIONS]->(e:Entity)
WITH m, session_id, collect({e: e, c: mn.count, p: coalesce(mn.paired, true)}) AS ms
CALL (ms) {
  UNWIND ms AS x
  WITH x WHERE x.e IS NOT NULL
  WITH x.e AS e, x.c AS c
  SET e.mention_count = e.mention_count - c,
      e.memory_count = coalesce(e.memory_count, 1) - 1
}
CALL (ms) {
  UNWIND ms AS a
  UNWIND ms AS b
  WITH a, b
  WHERE a.e IS NOT NULL AND b.e IS NOT NULL AND a.p AND b.p AND a.e.key < b.e.key
  WITH a.e AS a, b.e AS b
  MATCH (a)-[r:CO_OCCURS]->(b)
  SET r.weight = r.weight - 1
  WITH r WHERE r.weight <= 0
  DELETE r
}
CALL (m, ms) {
  UNWIND ms AS x
  WITH m, x.e AS e
  WHERE e IS NOT NULL AND e.embedding IS NOT NULL AND m.embedding IS NOT NULL
  WITH m, e, coalesce(e.embedding_n, 1) AS n
  CALL (m, e, n) {
    WITH m, e, n WHERE n > 1
    CALL db.create.setNodeVectorProperty(e, 'embedding',
      [i IN range(0, size(e.embedding) - 1) | (e.embedding[i] * n - m.embedding[i]) / (n - 1)])
    SET e.embedding_n = n - 1
  }
  CALL (e, n) {
    WITH e, n WHERE n <= 1
    REMOVE e.embedding, e.embedding_n
  }
}
CALL (m) {
  MATCH (m)-[:IN_STAGE]->(st:Stage)
  WHERE st.embedding IS NOT NULL AND m.embedding IS NOT NULL
  WITH m, st, coalesce(st.embedding_n, 1) AS n
  CALL (m, st, n) {
    WITH m, st, n WHERE n > 1
    CALL db.create.setNodeVectorProperty(st, 'embedding',
      [i IN range(0, size(st.embedding) - 1) | (st.embedding[i] * n - m.embedding[i]) / (n - 1)])
    SET st.embedding_n = n - 1
  }
  CALL (st, n) {
    WITH st, n WHERE n <= 1
    REMOVE st.embedding, st.embedding_n
  }
}
CALL (m) {
  OPTIONAL MATCH (c:Chunk)-[:CHUNK_OF]->(m)
  WITH collect(c) AS chunks
  FOREACH (c IN chunks | DETACH DELETE c)
  RETURN size(chunks) AS deleted_chunks
}
CALL (m) {
  OPTIONAL MATCH (x:EntityCandidate {space: $space, memory: m.id})
  WITH collect(x) AS candidates
  FOREACH (x IN candidates | DELETE x)
}
OPTIONAL MATCH (f:Fact)-[:EXTRACTED_FROM]->(m)
WITH m, session_id, ms, deleted_chunks, collect(f) AS facts
FOREACH (f IN facts | DETACH DELETE f)
WITH m, session_id, ms, deleted_chunks, size(facts) AS deleted_facts
DETACH DELETE m
WITH session_id, ms, deleted_chunks, deleted_facts
CALL (ms) {
  UNWIND ms AS x
  WITH x.e AS e WHERE e IS NOT NULL AND e.mention_count <= 0
  DETACH DELETE e
  RETURN count(*) AS orphaned
}
RETURN 1 AS memories, deleted_facts AS facts, deleted_chunks AS chunks,
       orphaned AS orphaned_entities, session_id

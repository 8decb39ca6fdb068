// Delete archived memories; their facts stay (provenance kept as source_id on the fact). Their
// chunks and the entity candidates they were the first sighting of go with them. Returns the
// sessions the deleted memories belonged to: the caller rebuilds their documents in the same
// transaction (pipelines.session_documents).
UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
WHERE m.status = 'archived'
OPTIONAL MATCH (f:Fact)-[:EXTRACTED_FROM]->(m)
SET f.source_deleted = true
WITH DISTINCT m
CALL (m) {
  OPTIONAL MATCH (c:Chunk)-[:CHUNK_OF]->(m)
  WITH collect(c) AS chunks
  FOREACH (c IN chunks | DETACH DELETE c)
}
CALL (m) {
  OPTIONAL MATCH (x:EntityCandidate {space: $space, memory: m.id})
  WITH collect(x) AS candidates
  FOREACH (x IN candidates | DELETE x)
}
WITH m, m.session_id AS session_id
DETACH DELETE m
RETURN count(*) AS deleted, collect(DISTINCT session_id) AS sessions

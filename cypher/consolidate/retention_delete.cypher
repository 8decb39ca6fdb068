// Delete archived memories; their facts stay (provenance kept as source_id on the fact).
// Returns the sessions the deleted memories belonged to: the caller rebuilds their documents
// in the same transaction (pipelines.session_documents).
UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
WHERE m.status = 'archived'
OPTIONAL MATCH (f:Fact)-[:EXTRACTED_FROM]->(m)
SET f.source_deleted = true
WITH DISTINCT m
WITH m, m.session_id AS session_id
DETACH DELETE m
RETURN count(*) AS deleted, collect(DISTINCT session_id) AS sessions

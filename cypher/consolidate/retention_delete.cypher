// Delete archived memories; their facts stay (provenance kept as source_id on the fact).
UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
WHERE m.status = 'archived'
OPTIONAL MATCH (f:Fact)-[:EXTRACTED_FROM]->(m)
SET f.source_deleted = true
WITH DISTINCT m
DETACH DELETE m
RETURN count(*) AS deleted

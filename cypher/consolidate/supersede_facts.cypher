// Active facts of some memories (claims are matched to them for fact-level supersession).
UNWIND $ids AS id
MATCH (f:Fact {space: $space})-[:EXTRACTED_FROM]->(m:Memory {space: $space, id: id})
WHERE f.status = 'active'
RETURN m.id AS memory, f.id AS id, f.text AS text
ORDER BY memory, id

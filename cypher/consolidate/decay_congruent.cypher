// Which of these memories are schema-congruent: they mention a key entity of their stage's
// schema.
UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})-[:IN_STAGE]->(:Stage)<-[:SUMMARIZES]-(sc:Schema)
WHERE EXISTS { (m)-[:MENTIONS]->(e:Entity) WHERE e.name IN sc.entities }
RETURN DISTINCT m.id AS id

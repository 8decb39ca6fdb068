// Entity keys mentioned by each of the given memories (the Phase-2 seeds).
UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
OPTIONAL MATCH (m)-[:MENTIONS]->(e:Entity)
RETURN m.id AS id, [k IN collect(e.key) WHERE k IS NOT NULL] AS keys

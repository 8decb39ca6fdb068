// Neo4j Browser: one stage with its sessions, memories and their entities
// (:param space => 'demo'; :param stage => 'gap:20230508T135600Z').
MATCH (s:Stage {space: $space, id: $stage})
OPTIONAL MATCH (se:Session)-[i:IN_STAGE]->(s)
OPTIONAL MATCH (m:Memory)-[j:IN_STAGE]->(s)
OPTIONAL MATCH (m)-[mn:MENTIONS]->(e:Entity)
RETURN s, se, i, m, j, mn, e
LIMIT 500

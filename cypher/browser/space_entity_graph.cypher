// Neo4j Browser: the entity co-occurrence graph of a space (set :param space => 'demo').
MATCH (a:Entity {space: $space})-[r:CO_OCCURS]->(b:Entity)
WHERE r.weight >= 2
RETURN a, r, b
LIMIT 300

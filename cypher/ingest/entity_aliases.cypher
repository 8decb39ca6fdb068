// Which of a batch's entity keys are aliases merged into another entity (entity_merge job):
// their mentions are written to the canonical entity instead.
UNWIND $keys AS k
MATCH (a:Entity {space: $space, key: k})-[:ALIAS_OF]->(c:Entity)
RETURN a.key AS alias, c.key AS canonical, c.name AS name, c.kind AS kind

// Set recounted weights; pairs no active memory supports any more lose their edge.
CALL () {
  UNWIND $set AS p
  MATCH (a:Entity {space: $space, key: p.a}), (b:Entity {space: $space, key: p.b})
  MERGE (a)-[r:CO_OCCURS]->(b)
  SET r.weight = p.w
  RETURN count(r) AS set
}
CALL () {
  UNWIND $delete AS p
  MATCH (:Entity {space: $space, key: p.a})-[r:CO_OCCURS]->(:Entity {space: $space, key: p.b})
  DELETE r
  RETURN count(*) AS deleted
}
RETURN set, deleted

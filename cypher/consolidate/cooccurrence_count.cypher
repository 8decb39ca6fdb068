// For a batch of entities a: the number of ACTIVE memories mentioning both a and b (a < b), and
// the stored CO_OCCURS weight, for every pair that has either.
UNWIND $keys AS k
MATCH (a:Entity {space: $space, key: k})
CALL (a) {
  MATCH (a)<-[:MENTIONS]-(m:Memory)-[:MENTIONS]->(b:Entity)
  WHERE m.status = 'active' AND b.space = $space AND a.key < b.key
  RETURN b.key AS b, count(DISTINCT m) AS counted, null AS stored
  UNION ALL
  MATCH (a)-[r:CO_OCCURS]->(b:Entity)
  RETURN b.key AS b, null AS counted, r.weight AS stored
}
WITH a.key AS a, b, max(counted) AS counted, max(stored) AS stored
WHERE counted IS NULL OR stored IS NULL OR counted <> stored
RETURN a, b, coalesce(counted, 0) AS counted, stored

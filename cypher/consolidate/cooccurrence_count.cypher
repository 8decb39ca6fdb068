// For a batch of entities a: the number of ACTIVE memories pairing a and b (a < b; a memory
// pairs its `paired` mentions only, see pipelines.ingest.entity_graph; mentions written before
// pairing existed count as paired), and the stored CO_OCCURS weight, for every pair that has
// either.
UNWIND $keys AS k
MATCH (a:Entity {space: $space, key: k})
CALL (a) {
  MATCH (a)<-[ra:MENTIONS]-(m:Memory)-[rb:MENTIONS]->(b:Entity)
  WHERE m.status = 'active' AND b.space = $space AND a.key < b.key
    AND coalesce(ra.paired, true) AND coalesce(rb.paired, true)
  RETURN b.key AS b, count(DISTINCT m) AS counted, null AS stored
  UNION ALL
  MATCH (a)-[r:CO_OCCURS]->(b:Entity)
  RETURN b.key AS b, null AS counted, r.weight AS stored
}
WITH a.key AS a, b, max(counted) AS counted, max(stored) AS stored
WHERE counted IS NULL OR stored IS NULL OR counted <> stored
RETURN a, b, coalesce(counted, 0) AS counted, stored

// Co-occurrence weights from new memories only (keeps re-sends idempotent). Stored a -> b with
// a.key < b.key; read undirected.
UNWIND $pairs AS p
MATCH (a:Entity {space: $space, key: p.a}), (b:Entity {space: $space, key: p.b})
MERGE (a)-[r:CO_OCCURS]->(b)
ON CREATE SET r.weight = 0
SET r.weight = r.weight + p.w
RETURN count(r) AS edges

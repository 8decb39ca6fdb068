// Entities (canonical key per space) promoted or mentioned by a batch, and their MENTIONS
// edges (`paired`: the mention takes part in the memory's co-occurrence pairs). Counts merge:
// mention_count (mentions), memory_count (memories mentioning the entity).
UNWIND $entities AS e
MERGE (x:Entity {space: $space, key: e.key})
ON CREATE SET x.name = e.name, x.kind = e.kind, x.first_seen = e.first_seen,
              x.last_seen = e.last_seen, x.mention_count = 0, x.memory_count = 0,
              x.caption = e.name
SET x.memory_count = coalesce(x.memory_count, COUNT { (x)<-[:MENTIONS]-() }) + e.memories,
    x.mention_count = x.mention_count + e.count,
    x.first_seen = CASE WHEN e.first_seen < x.first_seen THEN e.first_seen ELSE x.first_seen END,
    x.last_seen = CASE WHEN e.last_seen > x.last_seen THEN e.last_seen ELSE x.last_seen END
WITH count(x) AS entities
UNWIND $mentions AS r
MATCH (m:Memory {space: $space, id: r.memory}), (x:Entity {space: $space, key: r.key})
MERGE (m)-[rel:MENTIONS]->(x)
SET rel.count = r.count, rel.paired = r.paired
RETURN entities, count(rel) AS mentions

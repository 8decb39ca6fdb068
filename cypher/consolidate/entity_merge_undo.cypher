// Undo an entity merge (pipelines.consolidate.entity_merge): the alias's recorded MENTIONS and
// CO_OCCURS edges come back, the canonical loses exactly what it gained (edges it did not have
// before are deleted when nothing else was added to them), its counters and extent go back
// (the extent only when unchanged since), the alias is unmarked; the record stays 'undone' (the
// job will not propose the same merge again). Mentions ingested after the merge stay with the
// canonical: which name they used is not known.
MATCH (x:Merge {space: $space, id: $id})
WHERE x.kind = 'entity' AND x.status = 'applied'
MATCH (a:Entity {space: $space, key: x.duplicates[0]}), (c:Entity {space: $space, key: x.canonical})
CALL (x, a, c) {
  UNWIND range(0, size(x.moved_memories) - 1) AS i
  MATCH (m:Memory {space: $space, id: x.moved_memories[i]})
  MERGE (m)-[r:MENTIONS]->(a)
  SET r.count = x.moved_counts[i], r.paired = x.moved_paired[i]
  WITH m, x, i
  OPTIONAL MATCH (m)-[q:MENTIONS]->(c)
  WITH q, x, i, coalesce(q.count, 0) - x.moved_counts[i] AS left
  FOREACH (_ IN CASE WHEN q IS NOT NULL AND x.prior_counts[i] < 0 AND left <= 0
                     THEN [1] ELSE [] END | DELETE q)
  FOREACH (_ IN CASE WHEN q IS NOT NULL AND NOT (x.prior_counts[i] < 0 AND left <= 0)
                     THEN [1] ELSE [] END |
    SET q.count = left, q.paired = CASE WHEN x.prior_counts[i] < 0 THEN q.paired
                                        ELSE x.prior_paired[i] END)
  RETURN count(*) AS mentions
}
CALL (x, a, c) {
  UNWIND range(0, size(x.co_keys) - 1) AS i
  MATCH (o:Entity {space: $space, key: x.co_keys[i]})
  OPTIONAL MATCH (c)-[p:CO_OCCURS]-(o)
  WITH a, o, p, x, i, coalesce(p.weight, 0) - x.co_weights[i] AS left
  FOREACH (_ IN CASE WHEN p IS NOT NULL AND NOT x.co_had[i] AND left <= 0 THEN [1] ELSE [] END |
    DELETE p)
  FOREACH (_ IN CASE WHEN p IS NOT NULL AND (x.co_had[i] OR left > 0) THEN [1] ELSE [] END |
    SET p.weight = left)
  FOREACH (_ IN CASE WHEN a.key < o.key THEN [1] ELSE [] END |
    MERGE (a)-[r:CO_OCCURS]->(o) SET r.weight = x.co_weights[i])
  FOREACH (_ IN CASE WHEN o.key < a.key THEN [1] ELSE [] END |
    MERGE (o)-[r:CO_OCCURS]->(a) SET r.weight = x.co_weights[i])
  RETURN count(*) AS cooccurrences
}
CALL (x, a, c) {
  WITH x, a, c WHERE x.pair_weight > 0
  FOREACH (_ IN CASE WHEN a.key < c.key THEN [1] ELSE [] END |
    MERGE (a)-[r:CO_OCCURS]->(c) SET r.weight = x.pair_weight)
  FOREACH (_ IN CASE WHEN c.key < a.key THEN [1] ELSE [] END |
    MERGE (c)-[r:CO_OCCURS]->(a) SET r.weight = x.pair_weight)
  RETURN count(*) AS pair
}
OPTIONAL MATCH (a)-[link:ALIAS_OF]->(c)
DELETE link
WITH x, a, c, mentions
SET c.mention_count = c.mention_count - x.alias_mentions,
    c.memory_count = COUNT { (c)<-[:MENTIONS]-() },
    c.first_seen = CASE WHEN c.first_seen = x.canonical_first_seen
                        THEN x.before_first_seen ELSE c.first_seen END,
    c.last_seen = CASE WHEN c.last_seen = x.canonical_last_seen
                       THEN x.before_last_seen ELSE c.last_seen END,
    c.aliases = CASE WHEN size([n IN coalesce(c.aliases, []) WHERE n <> a.name]) = 0 THEN null
                     ELSE [n IN coalesce(c.aliases, []) WHERE n <> a.name] END
REMOVE a.merged_into
SET x.status = 'undone', x.undone_at = $now, x.undone_by = $by
RETURN x.id AS id, mentions AS restored

// Merge an alias entity into its canonical, undoably (pipelines.consolidate.entity_merge): the
// alias's MENTIONS and CO_OCCURS edges move to the canonical (counts and weights added), each
// recorded with what the canonical had before; the alias node stays, marked `merged_into` and
// linked (alias)-[:ALIAS_OF]->(canonical), so that ingest and recall resolve its key; a
// (:Merge {kind: 'entity'}) record keeps the evidence and everything undo needs.
MATCH (a:Entity {space: $space, key: $alias}), (c:Entity {space: $space, key: $canonical})
WHERE a.merged_into IS NULL AND c.merged_into IS NULL
CALL (a, c) {
  MATCH (m)-[r:MENTIONS]->(a)
  OPTIONAL MATCH (m)-[p:MENTIONS]->(c)
  WITH m, r, p IS NOT NULL AS had, coalesce(p.count, 0) AS before_count,
       coalesce(p.paired, false) AS before_paired, coalesce(r.count, 1) AS n,
       coalesce(r.paired, false) AS paired
  MERGE (m)-[q:MENTIONS]->(c)
  SET q.count = before_count + n, q.paired = before_paired OR paired
  DELETE r
  RETURN collect(m.id) AS memories, collect(n) AS counts, collect(paired) AS paired,
         collect(CASE WHEN had THEN before_count ELSE -1 END) AS prior_counts,
         collect(before_paired) AS prior_paired
}
CALL (a, c) {
  MATCH (a)-[r:CO_OCCURS]-(o:Entity)
  WHERE o <> c
  OPTIONAL MATCH (c)-[p:CO_OCCURS]-(o)
  WITH a, c, o, r, p, coalesce(r.weight, 0) AS w, p IS NOT NULL AS had
  FOREACH (_ IN CASE WHEN had THEN [1] ELSE [] END | SET p.weight = p.weight + w)
  FOREACH (_ IN CASE WHEN NOT had AND c.key < o.key THEN [1] ELSE [] END |
    CREATE (c)-[:CO_OCCURS {weight: w}]->(o))
  FOREACH (_ IN CASE WHEN NOT had AND o.key < c.key THEN [1] ELSE [] END |
    CREATE (o)-[:CO_OCCURS {weight: w}]->(c))
  DELETE r
  RETURN collect(o.key) AS co_keys, collect(w) AS co_weights, collect(had) AS co_had
}
CALL (a, c) {
  OPTIONAL MATCH (a)-[r:CO_OCCURS]-(c)
  WITH r, coalesce(r.weight, 0) AS w
  DELETE r
  RETURN sum(w) AS pair_weight
}
WITH a, c, memories, counts, paired, prior_counts, prior_paired, co_keys, co_weights, co_had,
     pair_weight,
     {mention_count: c.mention_count, first_seen: c.first_seen, last_seen: c.last_seen} AS before
SET c.mention_count = coalesce(c.mention_count, 0) + coalesce(a.mention_count, 0),
    c.memory_count = COUNT { (c)<-[:MENTIONS]-() },
    c.first_seen = CASE WHEN a.first_seen < c.first_seen THEN a.first_seen ELSE c.first_seen END,
    c.last_seen = CASE WHEN a.last_seen > c.last_seen THEN a.last_seen ELSE c.last_seen END,
    c.aliases = [x IN coalesce(c.aliases, []) WHERE x <> a.name] + a.name,
    a.merged_into = c.key
CREATE (a)-[:ALIAS_OF {merge_id: $id, at: $now}]->(c)
CREATE (x:Merge {space: $space, id: $id})
SET x.kind = 'entity', x.canonical = c.key, x.duplicates = [a.key], x.names = [a.name, c.name],
    x.similarities = [$score], x.lexical = [], x.reason = $reason, x.by = $by, x.at = $now,
    x.status = 'applied', x.prior_statuses = [], x.moved_memories = memories,
    x.moved_counts = counts,
    x.moved_paired = paired, x.prior_counts = prior_counts, x.prior_paired = prior_paired,
    x.co_keys = co_keys, x.co_weights = co_weights, x.co_had = co_had,
    x.pair_weight = pair_weight, x.alias_mentions = coalesce(a.mention_count, 0),
    x.before_mentions = before.mention_count, x.canonical_first_seen = c.first_seen,
    x.canonical_last_seen = c.last_seen, x.before_first_seen = before.first_seen,
    x.before_last_seen = before.last_seen, x.caption = 'alias ' + a.name + ' of ' + c.name
RETURN x.id AS id, size(memories) AS mentions, size(co_keys) AS cooccurrences

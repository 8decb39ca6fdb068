// What community stages are named from: per stage, the entities its active memories mention
// (speakers' own names left out), with how many of the stage's memories mention each (tf) and
// how many of the space's memories do (df), at most $limit per stage by tf
// (pipelines.consolidate.stage_names weighs them by tf-idf).
MATCH (st:Stage {space: $space})
WHERE st.kind = 'community' AND st.id IN $ids
CALL (st) {
  MATCH (m:Memory)-[:IN_STAGE]->(st)
  WHERE m.status = 'active'
  WITH collect(m) AS ms, collect(DISTINCT toLower(coalesce(m.speaker, ''))) AS speakers
  UNWIND ms AS m
  MATCH (m)-[:MENTIONS]->(e:Entity)
  WHERE NOT toLower(e.name) IN speakers
  WITH e, count(*) AS tf
  ORDER BY tf DESC, e.key
  LIMIT $limit
  RETURN collect({key: e.key, name: e.name, tf: tf, df: coalesce(e.memory_count, tf)}) AS terms
}
RETURN st.id AS id, terms
ORDER BY id

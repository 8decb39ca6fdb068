// What the alias evidence reads about a space's person-like entities (not already aliases):
// mentions, most co-occurring neighbours, and mentions per speaker of the mentioning memories
// (pipelines.consolidate.entity_aliases).
MATCH (e:Entity {space: $space})
WHERE e.merged_into IS NULL AND e.kind IN $kinds
CALL (e) {
  OPTIONAL MATCH (e)-[c:CO_OCCURS]-(o:Entity)
  WITH o, c ORDER BY c.weight DESC, o.key
  LIMIT $neighbours
  RETURN collect(o.key) AS neighbours
}
CALL (e) {
  MATCH (m)-[r:MENTIONS]->(e)
  WHERE m.space = $space
  WITH toLower(coalesce(m.speaker, m.role, '')) AS speaker, sum(coalesce(r.count, 1)) AS n
  RETURN collect({speaker: speaker, n: n}) AS by_speaker
}
RETURN e.key AS key, e.name AS name, e.kind AS kind, coalesce(e.mention_count, 0) AS mentions,
       neighbours, by_speaker
ORDER BY key

// Name community stages after their most mentioned entities (speakers' own names left out).
MATCH (st:Stage {space: $space})
WHERE st.kind = 'community' AND st.id IN $ids
CALL (st) {
  MATCH (m:Memory)-[:IN_STAGE]->(st)
  WHERE m.status = 'active'
  WITH collect(m) AS ms, collect(DISTINCT toLower(coalesce(m.speaker, ''))) AS speakers
  UNWIND ms AS m
  MATCH (m)-[:MENTIONS]->(e:Entity)
  WHERE NOT toLower(e.name) IN speakers
  WITH e.name AS name, count(*) AS c
  ORDER BY c DESC, name
  LIMIT $k
  RETURN collect(name) AS names
}
WITH st, CASE WHEN size(names) = 0 THEN 'topic ' + substring(st.id, 10)
              ELSE 'topic: ' + reduce(s = '', n IN names |
                     s + CASE WHEN s = '' THEN '' ELSE ', ' END + n) END AS name
SET st.name = name, st.caption = 'stage ' + name
RETURN count(st) AS named

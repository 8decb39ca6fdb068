// What a stage's schema depends on: its memories (id, status, active fact count), name and
// extent; plus the fingerprint of its current schema. $stages null: every stage.
MATCH (st:Stage {space: $space})
WHERE $stages IS NULL OR st.id IN $stages
CALL (st) {
  MATCH (m:Memory)-[:IN_STAGE]->(st)
  WHERE m.space = $space
  RETURN collect(m.id + ':' + coalesce(m.status, '') + ':' +
                 toString(COUNT { (f:Fact)-[:EXTRACTED_FROM]->(m) WHERE f.status = 'active' }))
         AS members,
         count(CASE WHEN m.status = 'active' THEN 1 END) AS active,
         count(DISTINCT CASE WHEN m.status = 'active' THEN m.session_id END) AS sessions
}
OPTIONAL MATCH (sc:Schema {space: $space})-[:SUMMARIZES]->(st)
RETURN st.id AS id, st.name AS name, st.kind AS kind, st.started_at AS start,
       st.ended_at AS end, members, active, sessions, sc.id AS schema_id,
       sc.fingerprint AS fingerprint
ORDER BY id

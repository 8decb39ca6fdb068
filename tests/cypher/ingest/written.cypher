// Tests only: what ingest wrote of a space's conversations, comparable across spaces: each
// memory with its session and stage, the NEXT links, each session's stage and document.
CALL () {
  MATCH (m:Memory {space: $space})-[:IN_SESSION]->(x:Session)
  OPTIONAL MATCH (m)-[:IN_STAGE]->(st:Stage)
  WITH m, x, st ORDER BY m.id
  RETURN collect({id: m.id, session: x.id, stage_kind: st.kind, stage_start: st.started_at}) AS memories
}
CALL () {
  MATCH (a:Memory {space: $space})-[:NEXT]->(b:Memory)
  WITH a.id + '>' + b.id AS link ORDER BY link
  RETURN collect(link) AS next
}
CALL () {
  MATCH (x:Session {space: $space})
  OPTIONAL MATCH (x)-[:IN_STAGE]->(st:Stage)
  WITH x, st ORDER BY x.id
  RETURN collect({id: x.id, start: st.started_at, end: st.ended_at, document: x.texts}) AS sessions
}
RETURN memories, next, sessions

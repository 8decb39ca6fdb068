MATCH (s:Stage {space: $space, id: $id})
OPTIONAL MATCH (sc:Schema)-[:SUMMARIZES]->(s)
CALL (s) {
  MATCH (m:Memory)-[:IN_STAGE]->(s)
  WITH m ORDER BY m.event_time, m.turn_index, m.id
  RETURN count(m) AS memory_count,
         collect(m {.id, .speaker, .role, .text, .session_id, .status,
                    event_time: toString(m.event_time)})[..$limit] AS memories
}
CALL (s) {
  OPTIONAL MATCH (se:Session)-[:IN_STAGE]->(s)
  RETURN collect(se.id) AS sessions
}
OPTIONAL MATCH (prev:Stage)-[:NEXT_STAGE]->(s)
OPTIONAL MATCH (s)-[:NEXT_STAGE]->(nxt:Stage)
RETURN s {.id, .name, .kind, .ordinal, started_at: toString(s.started_at),
          ended_at: toString(s.ended_at),
          schema: sc {.summary, .entities, .decisions, .outcomes, .open_questions,
                      refreshed_at: toString(sc.refreshed_at)}} AS stage,
       memory_count, memories, sessions, prev.id AS previous, nxt.id AS next

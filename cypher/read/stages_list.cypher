MATCH (s:Stage {space: $space})
OPTIONAL MATCH (sc:Schema)-[:SUMMARIZES]->(s)
CALL (s) {
  MATCH (m:Memory)-[:IN_STAGE]->(s)
  RETURN count(m) AS memories
}
RETURN s {.id, .name, .kind, .ordinal, started_at: toString(s.started_at),
          ended_at: toString(s.ended_at), memories: memories,
          schema: sc {.summary, .entities, .decisions, .outcomes, .open_questions,
                      refreshed_at: toString(sc.refreshed_at)}} AS stage
ORDER BY s.ordinal, s.started_at, s.id
SKIP $skip LIMIT $limit

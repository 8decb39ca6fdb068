// Rebuild the session documents of some sessions of one space ($session_ids; null: every
// session of the space): the texts of the session's memories (the $max_memories latest by
// event time) as the LIST<STRING> `texts`, and the space's full-text tag, both indexed by
// `session_text`. Run in the transaction that adds or deletes the memories, so a deleted
// memory's text never outlives it in its session's document.
MATCH (s:Session {space: $space})
WHERE $session_ids IS NULL OR s.id IN $session_ids
CALL (s) {
  OPTIONAL MATCH (m:Memory)-[:IN_SESSION]->(s)
  WHERE m.space = $space
  WITH m
  ORDER BY m.event_time DESC, m.turn_index DESC, m.id
  LIMIT $max_memories
  RETURN [t IN collect(m.text) WHERE t IS NOT NULL] AS texts
}
SET s.texts = texts, s.space_tag = $space_tag
RETURN count(s) AS sessions

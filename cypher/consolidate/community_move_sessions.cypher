// Move whole sessions (and every memory in them) to a stage, atomically per batch. A stage a
// unit leaves records where it went (moved_to), so its id stays resolvable once it is emptied.
UNWIND $moves AS mv
MATCH (s:Session {space: $space, id: mv.unit})
MATCH (st:Stage {space: $space, id: mv.stage})
CALL (s, st) {
  MATCH (s)-[r:IN_STAGE]->(old:Stage)
  SET old.moved_to = CASE WHEN old = st OR st.id IN coalesce(old.moved_to, []) THEN old.moved_to
                          ELSE coalesce(old.moved_to, []) + st.id END
  DELETE r
}
CALL (s, st) {
  MATCH (m:Memory)-[:IN_SESSION]->(s)
  CALL (m, st) {
    MATCH (m)-[r:IN_STAGE]->(old:Stage)
    SET old.moved_to = CASE WHEN old = st OR st.id IN coalesce(old.moved_to, []) THEN old.moved_to
                            ELSE coalesce(old.moved_to, []) + st.id END
    DELETE r
  }
  SET m.stage_id = st.id
  MERGE (m)-[:IN_STAGE]->(st)
}
SET s.stage_id = st.id
MERGE (s)-[:IN_STAGE]->(st)
RETURN count(s) AS moved

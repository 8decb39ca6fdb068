// Move memories without a session to a stage. A stage a memory leaves records where it went
// (moved_to), so its id stays resolvable once it is emptied.
UNWIND $moves AS mv
MATCH (m:Memory {space: $space, id: mv.unit})
MATCH (st:Stage {space: $space, id: mv.stage})
CALL (m, st) {
  MATCH (m)-[r:IN_STAGE]->(old:Stage)
  SET old.moved_to = CASE WHEN old = st OR st.id IN coalesce(old.moved_to, []) THEN old.moved_to
                          ELSE coalesce(old.moved_to, []) + st.id END
  DELETE r
}
SET m.stage_id = st.id
MERGE (m)-[:IN_STAGE]->(st)
RETURN count(m) AS moved

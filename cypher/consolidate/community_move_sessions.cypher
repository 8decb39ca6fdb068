// Move whole sessions (and every memory in them) to a stage, atomically per batch.
UNWIND $moves AS mv
MATCH (s:Session {space: $space, id: mv.unit})
MATCH (st:Stage {space: $space, id: mv.stage})
CALL (s) {
  MATCH (s)-[r:IN_STAGE]->()
  DELETE r
}
CALL (s, st) {
  MATCH (m:Memory)-[:IN_SESSION]->(s)
  CALL (m) {
    MATCH (m)-[r:IN_STAGE]->()
    DELETE r
  }
  SET m.stage_id = st.id
  MERGE (m)-[:IN_STAGE]->(st)
}
SET s.stage_id = st.id
MERGE (s)-[:IN_STAGE]->(st)
RETURN count(s) AS moved

// Move memories without a session to a stage.
UNWIND $moves AS mv
MATCH (m:Memory {space: $space, id: mv.unit})
MATCH (st:Stage {space: $space, id: mv.stage})
CALL (m) {
  MATCH (m)-[r:IN_STAGE]->()
  DELETE r
}
SET m.stage_id = st.id
MERGE (m)-[:IN_STAGE]->(st)
RETURN count(m) AS moved

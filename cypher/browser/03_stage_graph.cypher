// slide: Stages
// title: A stage with its memories in time order
// view: graph
// params: stage
// The stage `$stage` (empty: the latest stage), its first 100 memories in time order, `NEXT`
// from one turn to the next within a session, and the entities each memory `MENTIONS`.
MATCH (st:Stage {space: $space})
WHERE coalesce($stage, '') = '' OR st.id = $stage
WITH st ORDER BY st.started_at DESC, st.id LIMIT 1
MATCH (m:Memory)-[i:IN_STAGE]->(st)
WITH st, m, i ORDER BY m.event_time, m.turn_index LIMIT 100
OPTIONAL MATCH (m)-[n:NEXT]->(later:Memory)-[:IN_STAGE]->(st)
OPTIONAL MATCH (m)-[mn:MENTIONS]->(e:Entity)
RETURN st, i, m, n, later, collect(mn) AS mentions, collect(e) AS entities

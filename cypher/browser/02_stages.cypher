// slide: Stages
// title: The stages of the space, in time order
// view: table
// A stage is a period of the conversation history: a gap in time starts a new one, a session
// may name its own, and the communities job regroups memories by topic. Copy a `stage` id into
// the Stage box below to look at that stage; leave it empty for the latest one.
MATCH (st:Stage {space: $space})
RETURN st.id AS stage, st.name AS name, st.kind AS kind,
       toString(st.started_at) AS started, toString(st.ended_at) AS ended,
       COUNT { (:Session)-[:IN_STAGE]->(st) } AS sessions,
       COUNT { (:Memory)-[:IN_STAGE]->(st) } AS memories
ORDER BY st.started_at, st.ordinal, st.id
LIMIT 200

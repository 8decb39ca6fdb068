// Late-interaction token vectors of every memory of the given conversation sessions, stored in
// $token_format, grouped by session (the session-level late interaction scores a session by
// MaxSim of the query's tokens against all of its memories' tokens). Superseded memories
// count only when $statuses asks for them, as in the candidates.
UNWIND $sessions AS session_id
MATCH (s:Session {space: $space, id: session_id})<-[:IN_SESSION]-(m:Memory)
WHERE m.space = $space AND m.token_format = $token_format AND m.status IN $statuses
RETURN session_id, collect(m.token_vectors) AS tokens

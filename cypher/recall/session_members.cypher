// The memories of the given conversation sessions that have token vectors in $token_format,
// with their ingestion stamps (microseconds; the token cache's key), without the vectors:
// session late interaction reads those through the cache. One row per session (ids in id
// order, each as [id, stamp]): a row per memory cost more in the driver than the query.
// Superseded memories count only when $statuses asks for them, as in the candidates.
UNWIND $sessions AS session_id
MATCH (s:Session {space: $space, id: session_id})<-[:IN_SESSION]-(m:Memory)
WHERE m.space = $space AND m.token_format = $token_format AND m.status IN $statuses
WITH session_id, m
ORDER BY session_id, m.id
RETURN session_id,
       collect([m.id, m.ingested_at.epochSeconds * 1000000 + m.ingested_at.microsecond])
         AS members
ORDER BY session_id

// The memories of the given conversation sessions that have token vectors in $token_format,
// with their ingestion stamp (microseconds; the token cache's key), without the vectors:
// session late interaction reads those through the cache. Superseded memories count only
// when $statuses asks for them, as in the candidates.
UNWIND $sessions AS session_id
MATCH (s:Session {space: $space, id: session_id})<-[:IN_SESSION]-(m:Memory)
WHERE m.space = $space AND m.token_format = $token_format AND m.status IN $statuses
RETURN session_id, m.id AS id,
       m.ingested_at.epochSeconds * 1000000 + m.ingested_at.microsecond AS stamp
ORDER BY session_id, m.id

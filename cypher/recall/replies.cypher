// The reply to each of $ids: the next turn of its conversation (NEXT) when someone else said
// it (another role, or another speaker of the same role), passing the request's filters; one
// row per reply in the shape of recall/candidates, `request` naming the turn it answers, with
// its embedding when $with_embeddings.
UNWIND $ids AS id
MATCH (q:Memory {space: $space, id: id})-[:NEXT]->(m:Memory)
WHERE m.space = $space AND m.status IN $statuses
  AND (m.role <> q.role OR toLower(m.speaker) <> toLower(q.speaker))
  @include fragments/memory_filters
RETURN q.id AS request, m.id AS id, m.text AS text, m.speaker AS speaker, m.role AS role,
       m.kind AS kind, m.session_id AS session_id, m.turn_index AS turn_index,
       m.stage_id AS stage_id,
       m.event_time.epochSeconds * 1000000 + m.event_time.microsecond AS event_time_us,
       m.ingested_at.epochSeconds * 1000000 + m.ingested_at.microsecond AS ingested_at_us,
       m.heat AS heat,
       m.last_access.epochSeconds * 1000000 + m.last_access.microsecond AS last_access_us,
       m.access_count AS access_count, m.status AS status, null AS named_speaker_session,
       [] AS hits, coalesce(m.chunk_count, 0) AS chunk_count,
       CASE WHEN $with_embeddings THEN m.embedding END AS embedding

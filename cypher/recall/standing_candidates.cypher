// Standing instructions and preferences of the space (active facts of those categories, with
// the embedding ingest gave them) closest to the query, each as its source memory: one row per
// memory in the shape of recall/candidates, the statement's cosine as the 'standing' score.
// A space holds few of them; the (space, category) index finds them.
MATCH (f:Fact {space: $space})
WHERE f.category IN $categories AND f.status = 'active' AND f.embedding IS NOT NULL
// The statement's own text, or the topic it is conditioned on ("when I ask about deadlines"),
// whichever is closer to the query.
WITH f, vector.similarity.cosine(f.embedding, $embedding) AS own,
     CASE WHEN f.condition_embedding IS NULL THEN 0.0
          ELSE vector.similarity.cosine(f.condition_embedding, $embedding) END AS topic
WITH f, CASE WHEN topic > own THEN topic ELSE own END AS sim
WHERE 2.0 * sim - 1.0 >= $min_similarity
MATCH (f)-[:EXTRACTED_FROM]->(m:Memory)
WHERE m.space = $space AND m.status IN $statuses
  @include fragments/memory_filters
WITH m, max(sim) AS score
ORDER BY score DESC, m.id
LIMIT $k
RETURN m.id AS id, m.text AS text, m.speaker AS speaker, m.role AS role, m.kind AS kind,
       m.session_id AS session_id, m.turn_index AS turn_index, m.stage_id AS stage_id,
       m.event_time.epochSeconds * 1000000 + m.event_time.microsecond AS event_time_us,
       m.ingested_at.epochSeconds * 1000000 + m.ingested_at.microsecond AS ingested_at_us,
       m.heat AS heat,
       m.last_access.epochSeconds * 1000000 + m.last_access.microsecond AS last_access_us,
       m.access_count AS access_count, m.status AS status, null AS named_speaker_session,
       [{signal: 'standing', qi: 0, score: score}] AS hits,
       coalesce(m.chunk_count, 0) AS chunk_count

// The space's standing statements (active facts of $categories: instructions and preferences
// its user stated), each with the memory it was extracted from, closest to the query first (the
// statement's text or the topic it is conditioned on, whichever is closer). A space holds few of
// them; the (space, category) index finds them; at most $k, whose cosine reaches
// $min_similarity. Same row shape as assemble/facts.
MATCH (f:Fact {space: $space})
WHERE f.category IN $categories AND f.status = 'active' AND f.embedding IS NOT NULL
WITH f, vector.similarity.cosine(f.embedding, $embedding) AS own,
     CASE WHEN f.condition_embedding IS NULL THEN 0.0
          ELSE vector.similarity.cosine(f.condition_embedding, $embedding) END AS topic
WITH f, CASE WHEN topic > own THEN topic ELSE own END AS score
WHERE 2.0 * score - 1.0 >= $min_similarity
MATCH (f)-[:EXTRACTED_FROM]->(m:Memory)
WHERE m.space = $space AND m.status IN $statuses
  AND ($time_to IS NULL OR m.event_time <= $time_to)
RETURN f.id AS id, f.text AS text, f.category AS category, f.speaker AS speaker,
       m.id AS source_id, m.speaker AS source_speaker, m.role AS role,
       m.event_time.epochSeconds * 1000000 + m.event_time.microsecond AS event_time_us,
       score
ORDER BY score DESC, id
LIMIT $k

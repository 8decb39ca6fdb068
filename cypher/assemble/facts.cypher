// The space's facts closest to the query embedding, each with the memory it was extracted from:
// an exact cosine scan when the space holds at most $exact_max facts, else the fact_embedding
// index over-fetched ($fetch) and post-filtered by space. Only facts with an embedding (the
// embedded categories), active ones unless $include_superseded, from memories of $statuses
// that existed at $time_to (null: now). Scores are Neo4j's normalised cosine (1 + cos) / 2.
WITH COUNT { MATCH (:Fact {space: $space}) } <= $exact_max AS exact
CALL (exact) {
  WITH exact WHERE exact
  MATCH (f:Fact {space: $space})
  WHERE f.embedding IS NOT NULL
  WITH f, vector.similarity.cosine(f.embedding, $embedding) AS score
  ORDER BY score DESC, f.id
  LIMIT $fetch
  RETURN f, score
  UNION
  WITH exact WHERE NOT exact
  CALL db.index.vector.queryNodes('fact_embedding', $fetch, $embedding) YIELD node, score
  WITH node AS f, score
  WHERE f.space = $space
  RETURN f, score
}
WITH f, score
WHERE $include_superseded OR f.status = 'active'
MATCH (f)-[:EXTRACTED_FROM]->(m:Memory)
WHERE m.space = $space AND m.status IN $statuses
  AND ($time_to IS NULL OR m.event_time <= $time_to)
RETURN f.id AS id, f.text AS text, f.category AS category, f.speaker AS speaker,
       m.id AS source_id, m.speaker AS source_speaker, m.role AS role,
       m.event_time.epochSeconds * 1000000 + m.event_time.microsecond AS event_time_us,
       score
ORDER BY score DESC, id
LIMIT $k

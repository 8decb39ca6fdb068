// Active standing instructions and preferences of some speakers of the space, oldest first,
// with their embeddings (pipelines.ingest.standing decides what a new statement supersedes).
UNWIND ['instruction', 'preference'] AS category
MATCH (f:Fact {space: $space, category: category})
WHERE f.status = 'active' AND f.speaker IN $speakers AND f.embedding IS NOT NULL
RETURN f.id AS id, f.category AS category, f.text AS text, f.speaker AS speaker,
       f.change AS change, f.negated AS negated, f.embedding AS embedding,
       f.source_id AS source_id
ORDER BY f.event_time, f.id

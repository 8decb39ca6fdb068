// Every active memory of the space with what the lexical blocking needs; `fresh` marks those
// ingested since the watermark (all of them without one). Times as epoch milliseconds.
MATCH (m:Memory {space: $space})
WHERE m.status = 'active' AND m.embedding IS NOT NULL
RETURN m.id AS id, m.text AS text, m.speaker AS speaker, m.role AS role, m.kind AS kind,
       m.event_time.epochMillis AS event_ms, m.ingested_at.epochMillis AS ingested_ms,
       ($watermark IS NULL OR m.ingested_at >= $watermark) AS fresh

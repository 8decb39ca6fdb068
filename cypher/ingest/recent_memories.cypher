MATCH (m:Memory {space: $space})
WHERE m.status = 'active'
RETURN m.id AS id, m.text AS text, m.embedding AS embedding
ORDER BY m.event_time DESC, m.ingested_at DESC
LIMIT $limit

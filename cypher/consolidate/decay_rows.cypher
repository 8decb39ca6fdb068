// Every active memory with what decides its consolidation stage (times as epoch milliseconds:
// cheap to transfer).
MATCH (m:Memory {space: $space})
WHERE m.status = 'active'
RETURN m.id AS id, m.heat AS heat, m.last_access.epochMillis AS last_access_ms,
       m.ingested_at.epochMillis AS ingested_ms, m.event_time.epochMillis AS event_ms,
       m.access_count AS access_count, m.restatements AS restatements,
       m.importance AS importance, m.consolidation_stage AS stage, m.decay_rate AS decay_rate,
       m.heat_floor AS heat_floor, m.heat_current AS heat_current

// Active memories that may hold a claim ($pattern: a superset test of the claim rules), with
// what claim detection and ordering need (times as epoch ms).
MATCH (m:Memory {space: $space})
WHERE m.status = 'active' AND m.text =~ $pattern
RETURN m.id AS id, m.text AS text, m.speaker AS speaker, m.role AS role,
       m.event_time.epochMillis AS event_ms, m.ingested_at.epochMillis AS ingested_ms,
       m.turn_index AS turn_index

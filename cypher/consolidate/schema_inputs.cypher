// Active memories of some stages (text cut to $max_chars, time as epoch ms) with the keys of
// the entities they mention and the active facts the schema uses.
UNWIND $stages AS sid
MATCH (st:Stage {space: $space, id: sid})
MATCH (m:Memory)-[:IN_STAGE]->(st)
WHERE m.space = $space AND m.status = 'active'
RETURN sid AS stage, m.id AS id, left(m.text, $max_chars) AS text, m.speaker AS speaker,
       m.role AS role, m.event_time.epochMillis AS event_ms, m.session_id AS session_id,
       m.turn_index AS turn_index,
       [(m)-[:MENTIONS]->(e:Entity) | e.key] AS entities,
       [(f:Fact)-[:EXTRACTED_FROM]->(m)
        WHERE f.status = 'active' AND f.category IN ['decision', 'question', 'fact', 'action_item'] |
        f {.id, .category, .text, .speaker, .role}] AS facts

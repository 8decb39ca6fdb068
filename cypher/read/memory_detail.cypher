// One memory with its entities, facts, stage, session and turn neighbours.
MATCH (m:Memory {space: $space, id: $id})
OPTIONAL MATCH (m)-[mn:MENTIONS]->(e:Entity)
WITH m, collect(e {.key, .name, .kind, count: mn.count}) AS entities
OPTIONAL MATCH (f:Fact)-[:EXTRACTED_FROM]->(m)
WITH m, entities, collect(f {.id, .category, .text, .speaker, .confidence, .rule, .status}) AS facts
OPTIONAL MATCH (m)-[:IN_STAGE]->(st:Stage)
OPTIONAL MATCH (m)-[:IN_SESSION]->(se:Session)
OPTIONAL MATCH (prev:Memory)-[:NEXT]->(m)
OPTIONAL MATCH (m)-[:NEXT]->(nxt:Memory)
OPTIONAL MATCH (m)-[sup:SUPERSEDES]->(older:Memory)
OPTIONAL MATCH (newer:Memory)-[:SUPERSEDES]->(m)
RETURN m {.id, .text, .role, .speaker, .kind, .tags, .session_id, .turn_index, .stage_id,
          .status, .heat, .access_count, .importance, .content_hash, .gate, .metadata,
          event_time: toString(m.event_time), ingested_at: toString(m.ingested_at),
          last_access: toString(m.last_access)} AS memory,
       entities, facts,
       st {.id, .name, .kind} AS stage,
       se {.id, started_at: toString(se.started_at)} AS session,
       prev {.id, .speaker, .text} AS previous,
       nxt {.id, .speaker, .text} AS next,
       collect(DISTINCT older.id) AS supersedes,
       collect(DISTINCT newer.id) AS superseded_by

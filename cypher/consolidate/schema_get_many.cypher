// The stored schemas of some stages (the context assembler's Phase 3 reads several at once).
MATCH (sc:Schema {space: $space})-[:SUMMARIZES]->(st:Stage {space: $space})
WHERE st.id IN $stages
RETURN st.id AS stage_id,
       sc {.id, .stage_id, .summary, .entities, .decisions, .outcomes, .open_questions,
           .highlights, .speakers, .memory_count, .session_count, .fingerprint, .caption,
           .embedding, refreshed_at: toString(sc.refreshed_at)} AS schema

MATCH (sc:Schema {space: $space})-[:SUMMARIZES]->(st:Stage {space: $space, id: $stage})
RETURN sc {.id, .stage_id, .summary, .entities, .decisions, .outcomes, .open_questions,
           .highlights, .speakers, .memory_count, .session_count, .fingerprint, .caption,
           .embedding, refreshed_at: toString(sc.refreshed_at)} AS schema

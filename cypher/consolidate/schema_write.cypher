UNWIND $rows AS r
MATCH (st:Stage {space: $space, id: r.stage_id})
MERGE (sc:Schema {space: $space, id: r.id})
SET sc.stage_id = r.stage_id, sc.summary = r.summary, sc.entities = r.entities,
    sc.decisions = r.decisions, sc.outcomes = r.outcomes, sc.open_questions = r.open_questions,
    sc.highlights = r.highlights, sc.speakers = r.speakers, sc.memory_count = r.memory_count,
    sc.session_count = r.session_count, sc.fingerprint = r.fingerprint,
    sc.refreshed_at = $now, sc.caption = r.caption
WITH sc, st, r
CALL db.create.setNodeVectorProperty(sc, 'embedding', r.embedding)
MERGE (sc)-[:SUMMARIZES]->(st)
RETURN count(sc) AS written

MERGE (s:Session {space: $space, id: $session_id})
ON CREATE SET s.created_at = datetime(), s.started_at = $started_at, s.ended_at = $ended_at
SET s.started_at = CASE WHEN $started_at < s.started_at THEN $started_at ELSE s.started_at END,
    s.ended_at = CASE WHEN $ended_at > s.ended_at THEN $ended_at ELSE s.ended_at END,
    s.stage_id = $stage_id,
    s.caption = 'session ' + $session_id
WITH s
// a session belongs to one stage: drop the edge to a previous one
OPTIONAL MATCH (s)-[old:IN_STAGE]->(prev:Stage)
WHERE prev.id <> $stage_id
DELETE old
WITH DISTINCT s
MATCH (st:Stage {space: $space, id: $stage_id})
MERGE (s)-[:IN_STAGE]->(st)
RETURN s.id AS id

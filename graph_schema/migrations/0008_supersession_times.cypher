// Supersessions carry two times: `valid_from`, when the newer version became true (the newer
// node's event time: a memory's own, a fact's memory's), and `recorded_at`, when the server
// recorded it (the old `at`). Edges written before this migration get both; `at` stays.
MATCH (new:Memory)-[r:SUPERSEDES]->(:Memory)
WHERE r.valid_from IS NULL OR r.recorded_at IS NULL
SET r.valid_from = coalesce(r.valid_from, new.event_time, r.at),
    r.recorded_at = coalesce(r.recorded_at, r.at);
MATCH (new:Fact)-[r:SUPERSEDES]->(:Fact)
WHERE r.valid_from IS NULL OR r.recorded_at IS NULL
OPTIONAL MATCH (new)-[:EXTRACTED_FROM]->(nm:Memory)
WITH r, min(nm.event_time) AS event_time
SET r.valid_from = coalesce(r.valid_from, event_time, r.at),
    r.recorded_at = coalesce(r.recorded_at, r.at)

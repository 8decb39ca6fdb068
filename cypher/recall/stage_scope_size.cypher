// How many memories the stages of a stage filter hold (any status): recall scans them exactly
// when they are few, instead of post-filtering the global vector index by stage.
MATCH (m:Memory)
USING INDEX m:Memory(space, stage_id)
WHERE m.space = $space AND m.stage_id IN $stages
RETURN count(m) AS size

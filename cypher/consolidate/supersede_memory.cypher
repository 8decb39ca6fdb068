// Memory-level supersession: the older memory (and its active facts) become 'superseded', the
// edge records everything revert needs. Nothing happens unless the older one is still active
// and the newer one is active (or itself superseded, for chains written by the job).
// Two clocks: `valid_from` is when the newer version became true ($valid_from, else the newer
// memory's event time), `recorded_at` (= `at`) when the server recorded the supersession.
MATCH (old:Memory {space: $space, id: $older}), (new:Memory {space: $space, id: $newer})
WHERE old.status = 'active' AND new.status IN $newer_statuses AND old <> new
  AND NOT EXISTS { (old)-[:SUPERSEDES*1..50]->(new) }
OPTIONAL MATCH (f:Fact {space: $space})-[:EXTRACTED_FROM]->(old)
WHERE f.status = 'active'
WITH old, new, collect(f) AS facts
SET old.status = 'superseded'
FOREACH (f IN facts | SET f.status = 'superseded')
CREATE (new)-[r:SUPERSEDES]->(old)
SET r.id = $id, r.kind = 'memory', r.reason = $reason, r.at = $now, r.by = $by, r.rule = $rule,
    r.valid_from = coalesce($valid_from, new.event_time, $now), r.recorded_at = $now,
    r.attribute = $attribute, r.old_value = $old_value, r.new_value = $new_value,
    r.prior_status = 'active', r.fact_ids = [f IN facts | f.id], r.created_newer = $created_newer
RETURN r.id AS id, r.fact_ids AS fact_ids,
       toString(datetime({datetime: r.valid_from, timezone: '+00:00'})) AS valid_from,
       toString(datetime({datetime: r.recorded_at, timezone: '+00:00'})) AS recorded_at

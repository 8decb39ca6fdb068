// Fact-level supersession: only the older fact is retired (its memory says more and stays).
// Valid from the newer memory's event time ($valid_from when given), recorded at $now.
MATCH (old:Fact {space: $space, id: $older}), (new:Fact {space: $space, id: $newer})
WHERE old.status = 'active' AND new.status IN ['active', 'superseded'] AND old <> new
OPTIONAL MATCH (nm:Memory {space: $space, id: $newer_memory})
WITH old, new, nm
CREATE (new)-[r:SUPERSEDES]->(old)
SET old.status = 'superseded',
    r.id = $id, r.kind = 'fact', r.reason = $reason, r.at = $now, r.by = $by, r.rule = $rule,
    r.valid_from = coalesce($valid_from, nm.event_time, $now), r.recorded_at = $now,
    r.attribute = $attribute, r.old_value = $old_value, r.new_value = $new_value,
    r.prior_status = 'active', r.fact_ids = [], r.older_memory = $older_memory,
    r.newer_memory = $newer_memory, r.created_newer = false
RETURN r.id AS id, r.fact_ids AS fact_ids,
       toString(datetime({datetime: r.valid_from, timezone: '+00:00'})) AS valid_from,
       toString(datetime({datetime: r.recorded_at, timezone: '+00:00'})) AS recorded_at

// Supersessions of the space, newest first (memory- and fact-level), with their two times as
// UTC strings (see consolidate/supersession_get).
MATCH (old:Memory|Fact {space: $space})<-[r:SUPERSEDES]-(new)
WHERE $by IS NULL OR r.by = $by
WITH r, old, new ORDER BY r.at DESC, r.id
SKIP $skip LIMIT $limit
WITH r, old, new, coalesce(r.valid_from, r.at) AS valid, coalesce(r.recorded_at, r.at) AS recorded
RETURN r {.id, .kind, .reason, .by, .rule, .attribute, .old_value, .new_value, .fact_ids,
          at: toString(r.at),
          valid_from: CASE WHEN valid IS NULL THEN null
                           ELSE toString(datetime({datetime: valid, timezone: '+00:00'})) END,
          recorded_at: CASE WHEN recorded IS NULL THEN null
                            ELSE toString(datetime({datetime: recorded, timezone: '+00:00'})) END
       } AS supersession, new.id AS newer, old.id AS older

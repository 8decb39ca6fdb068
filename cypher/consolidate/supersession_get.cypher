// One supersession by id (memory- or fact-level), scoped to the space. Its two times as UTC
// strings: valid_from (valid time) and recorded_at (recorded time); both `at` before 0008.
MATCH (new {space: $space})-[r:SUPERSEDES {id: $id}]->(old {space: $space})
WITH new, r, old, coalesce(r.valid_from, r.at) AS valid, coalesce(r.recorded_at, r.at) AS recorded
RETURN r {.id, .kind, .reason, .by, .rule, .attribute, .old_value, .new_value, .prior_status,
          .fact_ids, .created_newer, at: toString(r.at),
          valid_from: CASE WHEN valid IS NULL THEN null
                           ELSE toString(datetime({datetime: valid, timezone: '+00:00'})) END,
          recorded_at: CASE WHEN recorded IS NULL THEN null
                            ELSE toString(datetime({datetime: recorded, timezone: '+00:00'})) END
       } AS supersession,
       new.id AS newer, old.id AS older, old.status AS older_status

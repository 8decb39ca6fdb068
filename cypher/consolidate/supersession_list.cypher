// Supersessions of the space, newest first (memory- and fact-level).
MATCH (old:Memory|Fact {space: $space})<-[r:SUPERSEDES]-(new)
WHERE $by IS NULL OR r.by = $by
WITH r, old, new ORDER BY r.at DESC, r.id
SKIP $skip LIMIT $limit
RETURN r {.id, .kind, .reason, .by, .rule, .attribute, .old_value, .new_value, .fact_ids,
          at: toString(r.at)} AS supersession, new.id AS newer, old.id AS older

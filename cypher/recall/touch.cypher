// A recall counts as an access: store the new (lazily decayed, then boosted) heat, bump the
// access count and the last access time of the returned memories. One write.
UNWIND $rows AS row
MATCH (m:Memory {space: $space, id: row.id})
SET m.heat = row.heat, m.last_access = $now,
    m.access_count = coalesce(m.access_count, 0) + 1
RETURN count(m) AS touched

// Recorded accesses (pipelines.access_log): store each memory's new (lazily decayed, then
// boosted) heat, its last access time and its access count. One write per batch; `at` and
// `count` default to `$now` and one access.
UNWIND $rows AS row
MATCH (m:Memory {space: $space, id: row.id})
SET m.heat = row.heat, m.last_access = coalesce(row.at, $now),
    m.access_count = coalesce(m.access_count, 0) + coalesce(row.count, 1)
RETURN count(m) AS touched

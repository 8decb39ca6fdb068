// Undo one merge: MERGED_INTO edges of this merge removed, duplicates back to their prior
// status (when still 'merged'), the canonical's absorbed counters restored ($restore: null
// removes a property that did not exist before), the record kept as 'undone' (it also stops
// the job from merging the same pair again).
MATCH (x:Merge {space: $space, id: $id})
WHERE x.status = 'applied' AND coalesce(x.kind, 'memory') = 'memory'
MATCH (c:Memory {space: $space, id: x.canonical})
SET c += $restore
SET x.status = 'undone', x.undone_at = $now, x.undone_by = $by
WITH x, c
UNWIND range(0, size(x.duplicates) - 1) AS i
MATCH (d:Memory {space: $space, id: x.duplicates[i]})
OPTIONAL MATCH (d)-[r:MERGED_INTO {merge_id: x.id}]->(c)
DELETE r
WITH d, x, i
SET d.status = CASE WHEN d.status = 'merged' THEN x.prior_statuses[i] ELSE d.status END
RETURN x.id AS id, count(d) AS restored

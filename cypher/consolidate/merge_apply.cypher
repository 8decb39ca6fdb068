// One merge: the record, the duplicates marked 'merged' with MERGED_INTO, the canonical's
// absorbed counters. The caller checked (in this transaction) that all are still active.
MATCH (c:Memory {space: $space, id: $canonical})
CREATE (x:Merge {space: $space, id: $id})
SET x.canonical = $canonical, x.duplicates = $duplicates, x.prior_statuses = $prior_statuses,
    x.similarities = $similarities, x.lexical = $lexical, x.reason = $reason, x.by = $by,
    x.at = $now, x.status = 'applied', x.canonical_before = $before,
    x.canonical_after = $after, x.caption = 'merge into ' + $canonical
SET c += $canonical_set
WITH c, x
UNWIND range(0, size($duplicates) - 1) AS i
MATCH (d:Memory {space: $space, id: $duplicates[i]})
SET d.status = 'merged'
CREATE (d)-[:MERGED_INTO {merge_id: $id, at: $now, similarity: $similarities[i]}]->(c)
RETURN count(d) AS merged

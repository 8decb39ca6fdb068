// One page of a space's nodes of one label, in key order, every property (export).
// __LABEL__ and __KEY__ are filled from pipelines.transfer.spec (an allowlist), never from a
// request; values travel as parameters.
MATCH (n:__LABEL__ {space: $space})
WHERE $after IS NULL OR n.__KEY__ > $after
RETURN properties(n) AS props
ORDER BY n.__KEY__
LIMIT $limit

// The bare vector-index query the /recall latency is compared with (benchmarks/perf.py): the top
// $k memories of the space by cosine similarity to a precomputed query embedding. The index is
// global, so it over-fetches $fetch neighbours and keeps those of the space (as recall must).
CALL db.index.vector.queryNodes('memory_embedding', $fetch, $embedding)
YIELD node, score
WHERE node.space = $space
RETURN node.id AS id, score
LIMIT $k

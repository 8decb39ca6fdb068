// Near-duplicate candidates for each incoming embedding (vector index, post-filtered to the
// space, over-fetched), plus the space's most recent memories as novelty context.
UNWIND range(0, size($embeddings) - 1) AS i
CALL db.index.vector.queryNodes('memory_embedding', $fetch, $embeddings[i]) YIELD node, score
WITH i, node, score
WHERE node.space = $space AND node.status = 'active'
WITH i, node ORDER BY score DESC
WITH i, collect(node)[..$per_item] AS nodes
UNWIND nodes AS n
RETURN i, n.id AS id, n.text AS text, n.embedding AS embedding

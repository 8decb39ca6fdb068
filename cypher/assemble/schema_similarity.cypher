// Similarity of the query to the stage schema summaries already built (vector index
// `schema_embedding`, over-fetched and post-filtered to the space). Scores are Neo4j's
// normalised cosine (1 + cos) / 2.
CALL db.index.vector.queryNodes('schema_embedding', $fetch, $embedding)
YIELD node, score
WITH node, score
WHERE node.space = $space AND node.stage_id IS NOT NULL
RETURN node.stage_id AS stage_id, max(score) AS score
ORDER BY score DESC
LIMIT $limit

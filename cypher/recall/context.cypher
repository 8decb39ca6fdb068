// Context reranker input: for each memory of the head of the fused list, its cosine to the
// query embedding and the cosines of its conversation neighbours up to $window turns away
// (NEXT edges, either direction; $window <= 3). Scores are normalised as (1 + cos) / 2.
// With $with_embeddings the stored embedding comes along (MMR selection needs it next), but
// not for the $cached_embeddings ids; with a $token_format, the token vectors stored in that
// format (late interaction needs them), but not those of the $cached ids (the process's
// vector cache holds both).
UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
WHERE m.embedding IS NOT NULL
CALL (m) {
  OPTIONAL MATCH p = (m)-[:NEXT*1..3]-(n:Memory)
  WHERE length(p) <= $window AND n.space = $space AND n.embedding IS NOT NULL
  RETURN collect(CASE WHEN n IS NULL THEN NULL
                      ELSE {distance: length(p),
                            score: vector.similarity.cosine(n.embedding, $embedding)} END)
         AS neighbours
}
RETURN m.id AS id, vector.similarity.cosine(m.embedding, $embedding) AS score, neighbours,
       CASE WHEN $with_embeddings AND NOT m.id IN $cached_embeddings THEN m.embedding END
         AS embedding,
       CASE WHEN m.token_format = $token_format AND NOT m.id IN $cached
            THEN m.token_vectors END AS tokens

// Sessions ranked by BM25 over their session documents (index `session_text`, see
// pipelines.session_documents): $fulltext is the recall's escaped Lucene query restricted to the
// space inside Lucene (pipelines.recall.query.scope_fulltext_query); the `s.space` test stays:
// isolation never rests on the tag. Ties break by id, so the ranking is deterministic: Lucene
// breaks them by insertion order, so it is asked for twice $session_k and the cut made here
// (BM25 norms are coarse, so sessions tie often; a space rebuilt by import ranks the same).
CALL db.index.fulltext.queryNodes('session_text', $fulltext, {limit: 2 * $session_k})
YIELD node, score
WITH node AS s, score
WHERE s.space = $space
RETURN s.id AS session_id, score
ORDER BY score DESC, session_id
LIMIT $session_k

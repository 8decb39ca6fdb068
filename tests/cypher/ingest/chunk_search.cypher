// Tests only: the chunks of a space that the chunk indexes find for a query, full-text (Lucene
// query restricted to the space's tag) and by vector (global index, kept to the space).
CALL () {
  CALL db.index.fulltext.queryNodes('chunk_text', $lucene) YIELD node, score
  RETURN collect(node.id)[..$k] AS fulltext
}
CALL () {
  CALL db.index.vector.queryNodes('chunk_embedding', $fetch, $embedding) YIELD node, score
  WITH node WHERE node.space = $space
  RETURN collect(node.id)[..$k] AS vector
}
RETURN fulltext, vector

// Tests only: the global (unscoped) top-N of the memory full-text index, with spaces.
CALL db.index.fulltext.queryNodes('memory_text', $lucene, {limit: $limit})
YIELD node, score
RETURN node.space AS space, node.id AS id, score

// Nodes of one label (import), keyed by (space, key): created if missing, their properties
// replaced, so importing twice changes nothing. Vectors are stored as float32, as ingest does.
// __LABEL__ / __KEY__: from pipelines.transfer.spec (an allowlist).
UNWIND $rows AS row
MERGE (n:__LABEL__ {space: $space, __KEY__: row.key})
SET n = row.props
WITH n, row
CALL (n, row) {
  WITH n, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
}
RETURN count(n) AS written

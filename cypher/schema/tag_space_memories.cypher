// Give every memory of one space its full-text space tag, in batches (auto-commit only).
MATCH (m:Memory {space: $space})
WHERE m.space_tag IS NULL
CALL (m) {
  SET m.space_tag = $space_tag
} IN TRANSACTIONS OF 10000 ROWS

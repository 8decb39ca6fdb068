// Relationships of one type between two labels (import), merged so importing twice changes
// nothing; their properties replaced. Returns how many rows found both ends (the caller
// refuses a batch where one is missing). Placeholders: pipelines.transfer.spec (an allowlist).
UNWIND $rows AS row
MATCH (a:__FROM__ {space: $space, __FROM_KEY__: row.from})
MATCH (b:__TO__ {space: $space, __TO_KEY__: row.to})
MERGE (a)-[r:__TYPE__]->(b)
SET r = row.props
RETURN count(r) AS written

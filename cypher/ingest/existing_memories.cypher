// Which of these memory ids already exist in the space (for idempotent re-sends).
UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
RETURN m.id AS id, m.content_hash AS content_hash, m.status AS status

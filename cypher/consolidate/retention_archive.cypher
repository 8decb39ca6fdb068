UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
WHERE m.status = 'active'
SET m.status = 'archived', m.archived_at = $now, m.archived_by = 'retention'
RETURN count(m) AS archived

// Memories archived by retention longer ago than the cutoff (deleted when the policy says so).
MATCH (m:Memory {space: $space})
WHERE m.status = 'archived' AND m.archived_by = 'retention' AND m.archived_at < $cutoff
RETURN m.id AS id
ORDER BY m.id

// TESTS ONLY: set a memory's status (e.g. 'superseded') without the consolidation machinery.
MATCH (m:Memory {space: $space, id: $id})
SET m.status = $status
RETURN m.id AS id, m.status AS status

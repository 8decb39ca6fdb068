// TESTS ONLY: set a memory's stored heat.
MATCH (m:Memory {space: $space, id: $id})
SET m.heat = $heat
RETURN m.id AS id, m.heat AS heat

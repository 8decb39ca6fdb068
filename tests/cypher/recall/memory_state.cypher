// TESTS ONLY: the access bookkeeping of some memories (heat, access count, last access).
UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
RETURN m.id AS id, m.heat AS heat, m.access_count AS access_count,
       m.last_access AS last_access

// TESTS ONLY: remove a memory's MENTIONS edges.
MATCH (m:Memory {space: $space, id: $id})-[r:MENTIONS]->()
DELETE r
RETURN count(r) AS dropped

// The live stages that absorbed a deleted stage id, the one holding most memories first.
MATCH (t:Stage {space: $space})
WHERE $id IN coalesce(t.absorbed, [])
RETURN t.id AS id, COUNT { (:Memory)-[:IN_STAGE]->(t) } AS memories
ORDER BY memories DESC, id

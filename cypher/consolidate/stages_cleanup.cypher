// Derived (gap/community) stages nothing belongs to any more are deleted with their schema;
// explicit label stages are never deleted.
MATCH (s:Stage {space: $space})
WHERE s.kind IN ['gap', 'community'] AND NOT EXISTS { ()-[:IN_STAGE]->(s) }
OPTIONAL MATCH (sc:Schema {space: $space})-[:SUMMARIZES]->(s)
WITH collect(DISTINCT s) AS stages, collect(DISTINCT sc) AS schemas
FOREACH (x IN schemas | DETACH DELETE x)
FOREACH (x IN stages | DETACH DELETE x)
RETURN size(stages) AS stages, size(schemas) AS schemas

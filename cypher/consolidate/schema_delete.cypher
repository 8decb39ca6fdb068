// Schemas of the given stages (left without active memories) and schemas whose stage is gone.
MATCH (sc:Schema {space: $space})
WHERE sc.stage_id IN $stages OR NOT EXISTS { (sc)-[:SUMMARIZES]->(:Stage) }
DETACH DELETE sc
RETURN count(*) AS deleted

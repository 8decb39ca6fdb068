MATCH (sc:Schema {space: $space})
WHERE NOT EXISTS { (sc)-[:SUMMARIZES]->(:Stage) }
RETURN count(sc) AS orphans

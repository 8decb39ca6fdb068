// Leiden communities of the projected graph (fixed seed), reported for the units only.
CALL gds.leiden.stream($graph, {relationshipWeightProperty: 'weight', randomSeed: $seed,
                                concurrency: $concurrency, gamma: $gamma, theta: $theta,
                                tolerance: $tolerance, maxLevels: $max_levels})
YIELD nodeId, communityId
WITH gds.util.asNode(nodeId) AS n, communityId
WHERE n:Session OR n:Memory
RETURN CASE WHEN n:Session THEN 'session:' ELSE 'memory:' END + n.id AS unit,
       communityId AS community

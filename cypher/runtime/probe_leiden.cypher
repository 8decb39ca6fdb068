CALL gds.leiden.stream($g, {relationshipWeightProperty: 'w', randomSeed: 42, concurrency: 1})
YIELD nodeId, communityId
RETURN count(DISTINCT communityId) AS c

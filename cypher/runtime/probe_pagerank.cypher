CALL gds.pageRank.stream($g, {sourceNodes: [0], relationshipWeightProperty: 'w', concurrency: 1})
YIELD nodeId, score
RETURN nodeId, score ORDER BY score DESC

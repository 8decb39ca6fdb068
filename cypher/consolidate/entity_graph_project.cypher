// The space's entity co-occurrence graph for Personalized PageRank: every entity of the space
// (isolated ones too), CO_OCCURS as undirected relationships with property `weight`.
MATCH (a:Entity {space: $space})
OPTIONAL MATCH (a)-[r:CO_OCCURS]->(b:Entity {space: $space})
WHERE r.weight > 0
WITH gds.graph.project($graph, a, b,
       {relationshipProperties: {weight: toFloat(coalesce(r.weight, 0))}},
       {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships

// The memory-entity graph of the space, aggregated to the units that move between stages: a
// session (its active memories) or a memory without a session. Unit -> entity relationships
// weigh how many of the unit's active memories mention the entity; hub entities mentioned more
// than $max_degree times are left out. Undirected; units without entities stay as nodes.
MATCH (m:Memory {space: $space})
WHERE m.status = 'active'
OPTIONAL MATCH (m)-[:IN_SESSION]->(s:Session)
WITH coalesce(s, m) AS u, m
OPTIONAL MATCH (m)-[:MENTIONS]->(e:Entity)
WHERE COUNT { (e)<-[:MENTIONS]-() } <= $max_degree
WITH u, e, count(m) AS w
WITH gds.graph.project($graph, u, e, {relationshipProperties: {weight: toFloat(w)}},
                       {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships

// A 4-node graph from literal ids: nothing is read from or written to the database.
UNWIND [[0, 1, 1.0], [1, 2, 2.0], [2, 0, 1.0], [3, 2, 1.0]] AS e
WITH gds.graph.project($g, e[0], e[1], {relationshipProperties: {w: e[2]}},
                       {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.nodeCount AS n

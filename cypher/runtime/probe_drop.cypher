CALL gds.graph.drop($g, false) YIELD graphName RETURN graphName

CALL gds.graph.exists($graph) YIELD exists
RETURN exists

// Drop every in-memory GDS graph projected for a space (names carry the space after a prefix).
CALL gds.graph.list() YIELD graphName
WITH graphName
WHERE any(prefix IN $prefixes WHERE graphName STARTS WITH prefix)
CALL gds.graph.drop(graphName, false) YIELD graphName AS dropped
RETURN count(dropped) AS dropped

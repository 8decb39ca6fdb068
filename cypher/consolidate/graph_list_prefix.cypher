// Projected graphs whose name starts with $prefix, with their age in seconds.
CALL gds.graph.list() YIELD graphName, creationTime
WITH graphName, creationTime
WHERE graphName STARTS WITH $prefix
RETURN graphName AS graph, duration.inSeconds(creationTime, datetime()).seconds AS age_seconds

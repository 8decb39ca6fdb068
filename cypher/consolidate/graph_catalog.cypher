// Mnemograph's in-memory graphs (names under one of $prefixes): the heap each holds and when it
// was made (epoch milliseconds).
CALL gds.graph.list() YIELD graphName, sizeInBytes, creationTime
WITH graphName, sizeInBytes, creationTime
WHERE any(prefix IN $prefixes WHERE graphName STARTS WITH prefix)
RETURN graphName AS graph, sizeInBytes AS bytes, creationTime.epochMillis AS created_ms

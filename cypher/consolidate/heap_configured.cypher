// Neo4j's configured maximum heap as the server reports it (e.g. "2.00GiB"; null when the
// setting is unset and the JVM chose its own): what the GDS memory budget is derived from.
CALL dbms.listConfig('server.memory.heap.max_size') YIELD name, value
WHERE name = 'server.memory.heap.max_size'
RETURN value

// What a projection of $nodes nodes and $relationships relationships would take on the heap
// (GDS's estimate, relationships stored both ways as undirected), what the in-memory graphs
// already hold, and Neo4j's maximum heap, all in bytes.
CALL gds.graph.project.estimate('*', '*', {
  nodeCount: $nodes, relationshipCount: 2 * $relationships, relationshipProperties: 'weight'
}) YIELD bytesMax
CALL () {
  CALL gds.graph.list() YIELD sizeInBytes
  RETURN coalesce(sum(sizeInBytes), 0) AS held
}
CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes
RETURN bytesMax AS estimate, held, attributes.HeapMemoryUsage.value.properties.max AS heap_max

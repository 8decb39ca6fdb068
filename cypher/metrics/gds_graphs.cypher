// GDS in-memory graphs held (every space's: the catalog is the database's), the heap they use,
// and Neo4j's maximum heap, in bytes (/metrics).
CALL () {
  CALL gds.graph.list() YIELD sizeInBytes
  RETURN count(*) AS graphs, coalesce(sum(sizeInBytes), 0) AS bytes
}
CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes
RETURN graphs, bytes, attributes.HeapMemoryUsage.value.properties.max AS heap_max

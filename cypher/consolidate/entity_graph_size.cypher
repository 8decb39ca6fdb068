// Size of the space's entity co-occurrence projection (see entity_graph_project).
CALL () { MATCH (e:Entity {space: $space}) RETURN count(e) AS nodes }
CALL () {
  MATCH (:Entity {space: $space})-[r:CO_OCCURS]->(b:Entity {space: $space})
  WHERE r.weight > 0
  RETURN count(r) AS relationships
}
RETURN nodes, relationships

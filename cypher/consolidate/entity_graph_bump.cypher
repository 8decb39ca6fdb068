// The entity graph changed outside ingest (weights recounted): projections are stale.
MATCH (s:Space {id: $space})
SET s.entity_graph_version = coalesce(s.entity_graph_version, 0) + 1
RETURN s.entity_graph_version AS version

// Cheap fingerprint of the space's entity graph: entity count, total mentions, latest
// mention, and the version upkeep bumps when it rewrites weights.
MATCH (s:Space {id: $space})
CALL () {
  MATCH (e:Entity {space: $space})
  RETURN count(e) AS entities, sum(e.mention_count) AS mentions, max(e.last_seen) AS last_seen
}
RETURN entities, mentions, toString(last_seen) AS last_seen,
       coalesce(s.entity_graph_version, 0) AS version

// Personalized PageRank over the space's projected entity graph, one run per seed group (GDS
// 2.13 has no per-seed weights; a run restarting at several sources is the sum of the
// single-source runs, so the caller combines the groups linearly). Seeds missing from the
// projection are left out of their group; a group left without seeds is not run.
UNWIND $groups AS g
CALL (g) {
  MATCH (e:Entity {space: $space})
  WHERE e.key IN g.keys
  WITH collect(e) AS seeds
  WHERE size(seeds) > 0
  CALL gds.pageRank.stream($graph, {
    sourceNodes: seeds,
    relationshipWeightProperty: $weight_property,
    dampingFactor: $damping,
    maxIterations: $max_iterations,
    tolerance: $tolerance,
    concurrency: $concurrency
  })
  YIELD nodeId, score
  WITH nodeId, score
  WHERE score > 0
  ORDER BY score DESC
  LIMIT $per_run
  RETURN gds.util.asNode(nodeId).key AS key, score
}
RETURN g.id AS run, key, score

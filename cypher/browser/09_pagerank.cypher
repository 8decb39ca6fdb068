// slide: PageRank
// title: What PageRank reaches from an entity
// view: table
// params: entity
// Personalized PageRank (GDS, default damping 0.85) restarting at the entity `$entity` (empty:
// the most mentioned one) over the co-occurrence graph weighted by `CO_OCCURS.weight`: the 20
// entities it reaches most. The projection is made for this query and dropped after it.
MATCH (source:Entity {space: $space})
WHERE coalesce($entity, '') = '' OR source.key = $entity OR toLower(source.name) = toLower($entity)
WITH source ORDER BY source.mention_count DESC, source.key LIMIT 1
MATCH (a:Entity {space: $space})
OPTIONAL MATCH (a)-[r:CO_OCCURS]->(b:Entity {space: $space})
WITH source, gds.graph.project('mnemograph/browser/' + randomUUID(), a, b,
       {relationshipProperties: {weight: toFloat(coalesce(r.weight, 0))}},
       {undirectedRelationshipTypes: ['*']}) AS g
CALL (g, source) {
  CALL gds.pageRank.stream(g.graphName,
    {sourceNodes: [source], relationshipWeightProperty: 'weight'})
  YIELD nodeId, score
  WITH nodeId, score ORDER BY score DESC LIMIT 20
  RETURN collect({entity: gds.util.asNode(nodeId), score: score}) AS ranked
}
CALL gds.graph.drop(g.graphName, false) YIELD graphName
UNWIND ranked AS hit
RETURN source.name AS source, hit.entity.name AS entity, hit.entity.kind AS kind,
       round(hit.score, 4) AS score, hit.entity.mention_count AS mentions

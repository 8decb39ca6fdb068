// TESTS ONLY: every node of a space (plus its Space node) with labels and properties, and the
// relationships leaving them, for exact before/after comparisons. JobRun and Lease nodes (run
// bookkeeping) are left out.
CALL () {
  MATCH (n:Memory {space: $space}) RETURN n
  UNION MATCH (n:Entity {space: $space}) RETURN n
  UNION MATCH (n:Session {space: $space}) RETURN n
  UNION MATCH (n:Stage {space: $space}) RETURN n
  UNION MATCH (n:Fact {space: $space}) RETURN n
  UNION MATCH (n:Schema {space: $space}) RETURN n
  UNION MATCH (n:Merge {space: $space}) RETURN n
  UNION MATCH (n:Chunk {space: $space}) RETURN n
  UNION MATCH (n:EntityCandidate {space: $space}) RETURN n
  UNION MATCH (n:Space {id: $space}) RETURN n
}
OPTIONAL MATCH (n)-[r]->(m)
RETURN labels(n) AS labels, properties(n) AS props,
       collect(CASE WHEN r IS NULL THEN null
               ELSE [type(r), properties(r), labels(m), coalesce(m.id, m.key)] END) AS out

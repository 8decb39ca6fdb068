// Before memory $id leaves the graph: each supersession it (or one of its facts) made passes to
// its own successor, when it has one. The record keeps its id and its fields (a later revert
// still restores exactly), and says which node it was re-linked past. The older node stays
// superseded, its history intact. Facts of the memory are deleted with it, so they count as
// gone too.
MATCH (m:Memory {space: $space, id: $id})
OPTIONAL MATCH (m)<-[:EXTRACTED_FROM]-(f:Fact)
WITH m, [m] + collect(f) AS gone
UNWIND gone AS g
MATCH (g)-[r:SUPERSEDES]->(old {space: $space})
WHERE NOT old IN gone
CALL (g, gone) {
  OPTIONAL MATCH (succ {space: $space})-[s:SUPERSEDES]->(g)
  WHERE NOT succ IN gone
  WITH succ, s ORDER BY s.at DESC, succ.id
  RETURN collect(succ)[0] AS succ
}
WITH g, r, old, succ WHERE succ IS NOT NULL
CREATE (succ)-[n:SUPERSEDES]->(old)
SET n = properties(r), n.relinked_past = g.id, n.relinked_at = $now
WITH r, old, succ
DELETE r
RETURN count(*) AS relinked, collect(old.id) AS older

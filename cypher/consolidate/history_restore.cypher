// Before memory $id leaves the graph, after history_relink: the supersessions it (or one of its
// facts) still makes have no successor to pass to, so they are undone as a revert would: the
// older node (and the facts the supersession retired) get their prior status back unless
// another supersession still retires them.
MATCH (m:Memory {space: $space, id: $id})
OPTIONAL MATCH (m)<-[:EXTRACTED_FROM]-(f:Fact)
WITH m, [m] + collect(f) AS gone
UNWIND gone AS g
MATCH (g)-[r:SUPERSEDES]->(old {space: $space})
WHERE NOT old IN gone
WITH old, r.prior_status AS prior, coalesce(r.fact_ids, []) AS fact_ids, r
DELETE r
WITH old, prior, fact_ids
SET old.status = CASE WHEN old.status = 'superseded' AND NOT EXISTS { ()-[:SUPERSEDES]->(old) }
                      THEN prior ELSE old.status END
WITH old, fact_ids
CALL (fact_ids) {
  UNWIND fact_ids AS fid
  MATCH (x:Fact {space: $space, id: fid})
  WHERE x.status = 'superseded' AND NOT EXISTS { ()-[:SUPERSEDES]->(x) }
  SET x.status = 'active'
  RETURN count(x) AS facts
}
RETURN count(old) AS restored, collect(old.id) AS older, sum(facts) AS facts

// Revert one supersession: the edge goes, the older node (and the facts it retired) get their
// prior status back unless another supersession still retires them, and the pair is remembered
// so the automatic job does not propose it again. A correction memory that the supersession
// itself created from content is archived.
MATCH (new {space: $space})-[r:SUPERSEDES {id: $id}]->(old {space: $space})
WITH new, r, old, r.prior_status AS prior, r.fact_ids AS fact_ids,
     coalesce(r.created_newer, false) AS created, old.id + '>' + new.id AS pair
DELETE r
WITH new, old, prior, fact_ids, created, pair
SET old.status = CASE WHEN old.status = 'superseded' AND NOT EXISTS { ()-[:SUPERSEDES]->(old) }
                      THEN prior ELSE old.status END
SET new.status = CASE WHEN created AND new.status = 'active' THEN 'archived' ELSE new.status END
WITH old, fact_ids, pair, created
CALL (fact_ids) {
  UNWIND fact_ids AS fid
  MATCH (f:Fact {space: $space, id: fid})
  WHERE f.status = 'superseded' AND NOT EXISTS { ()-[:SUPERSEDES]->(f) }
  SET f.status = 'active'
  RETURN count(f) AS facts
}
MATCH (s:Space {id: $space})
SET s.supersede_reverted = CASE WHEN pair IN coalesce(s.supersede_reverted, [])
                                THEN s.supersede_reverted
                                ELSE coalesce(s.supersede_reverted, []) + pair END
RETURN old.id AS older, old.status AS status, facts, created

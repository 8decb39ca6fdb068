// Delete up to $batch nodes of each kind in one space; the caller repeats until nothing is left.
CALL () { MATCH (n:Fact {space: $space}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS facts }
CALL () { MATCH (n:Chunk {space: $space}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS chunks }
CALL () { MATCH (n:Memory {space: $space}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS memories }
CALL () { MATCH (n:Entity {space: $space}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS entities }
CALL () { MATCH (n:EntityCandidate {space: $space}) WITH n LIMIT $batch DELETE n RETURN count(*) AS candidates }
CALL () { MATCH (n:Session {space: $space}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS sessions }
CALL () { MATCH (n:Stage {space: $space}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS stages }
CALL () { MATCH (n:Schema {space: $space}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS schemas }
CALL () { MATCH (n:JobRun {space: $space}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS job_runs }
CALL () { MATCH (n:Lease {space: $space}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS leases }
CALL () { MATCH (n:Merge {space: $space}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS merges }
RETURN facts + chunks + memories + entities + candidates + sessions + stages + schemas + job_runs + leases + merges AS deleted

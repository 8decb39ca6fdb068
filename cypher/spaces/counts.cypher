// Node counts of one space, by kind (each count uses the label's space index).
CALL () { MATCH (n:Memory {space: $space}) RETURN count(n) AS memories }
CALL () { MATCH (n:Session {space: $space}) RETURN count(n) AS sessions }
CALL () { MATCH (n:Entity {space: $space}) RETURN count(n) AS entities }
CALL () { MATCH (n:Stage {space: $space}) RETURN count(n) AS stages }
CALL () { MATCH (n:Fact {space: $space}) RETURN count(n) AS facts }
CALL () { MATCH (n:Schema {space: $space}) RETURN count(n) AS schemas }
CALL () { MATCH (n:JobRun {space: $space}) RETURN count(n) AS job_runs }
CALL () { MATCH (n:Chunk {space: $space}) RETURN count(n) AS chunks }
RETURN memories, sessions, entities, stages, facts, schemas, job_runs, chunks

// Candidates promoted to entities by this batch.
UNWIND $keys AS k
MATCH (x:EntityCandidate {space: $space, key: k})
DELETE x
RETURN count(*) AS deleted

// The gate merged incoming events into existing memories: count the restatements there.
UNWIND $merges AS mg
MATCH (m:Memory {space: $space, id: mg.target})
SET m.restatements = coalesce(m.restatements, 0) + 1, m.last_restated = datetime()
RETURN count(m) AS merged

// Runs of a crashed runner (its lease expired) are marked interrupted when the next one starts.
MATCH (j:JobRun {space: $space})
WHERE j.job = $job AND j.status = 'running' AND j.holder = $holder
SET j.status = 'interrupted', j.ended_at = datetime()
RETURN count(j) AS interrupted

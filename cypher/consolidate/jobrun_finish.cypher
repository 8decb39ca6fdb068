MATCH (j:JobRun {id: $id})
WHERE j.space = $space
SET j.ended_at = $ended_at, j.status = $status, j.counts = $counts, j.errors = $errors,
    j.sample = $sample, j.duration_ms = $duration_ms
RETURN j.id AS id

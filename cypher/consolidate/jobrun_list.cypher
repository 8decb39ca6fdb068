MATCH (j:JobRun {space: $space})
WHERE $job IS NULL OR j.job = $job
WITH j ORDER BY j.started_at DESC, j.id
SKIP $skip LIMIT $limit
RETURN j {.id, .space, .job, .dry_run, .status, .counts, .errors, .sample, .trigger,
          .duration_ms, started_at: toString(j.started_at), ended_at: toString(j.ended_at)} AS run

MATCH (j:JobRun {id: $id})
WHERE j.space = $space
RETURN j {.id, .space, .job, .dry_run, .status, .counts, .errors, .sample, .trigger,
          .duration_ms, started_at: toString(j.started_at), ended_at: toString(j.ended_at)} AS run

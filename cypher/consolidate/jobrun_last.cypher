// When each job last started for real (not a dry run) in this space: the scheduler's clock.
MATCH (j:JobRun {space: $space})
WHERE j.dry_run = false OR $include_dry
RETURN j.job AS job, max(j.started_at) AS last_started

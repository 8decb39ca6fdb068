// slide: Jobs
// title: Recent job runs
// view: table
// Consolidation jobs (merge, supersede, decay, communities, schemas, upkeep, token_vectors,
// retention) record every run: when, what it counted and any errors. Dry runs change nothing.
MATCH (j:JobRun {space: $space})
RETURN toString(j.started_at) AS started, j.job AS job, j.status AS status,
       j.dry_run AS dry_run, j.trigger AS trigger, j.duration_ms AS ms, j.counts AS counts,
       j.errors AS errors
ORDER BY j.started_at DESC
LIMIT 25

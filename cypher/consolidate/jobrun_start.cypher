// A run starts: its record exists before any work, so a crash leaves a visible trace.
CREATE (j:JobRun {id: $id})
SET j.space = $space, j.job = $job, j.dry_run = $dry_run, j.started_at = $started_at,
    j.status = 'running', j.holder = $holder, j.trigger = $trigger, j.errors = [],
    j.caption = $job + CASE WHEN $dry_run THEN ' (dry run)' ELSE '' END
RETURN j.id AS id

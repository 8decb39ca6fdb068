// Runs of the space, newest first; a 'running' run whose runner no longer holds a live lease
// reads 'interrupted' (it crashed: the lease stopped being renewed).
MATCH (j:JobRun {space: $space})
WHERE $job IS NULL OR j.job = $job
WITH j ORDER BY j.started_at DESC, j.id
SKIP $skip LIMIT $limit
WITH j, j.status = 'running' AND NOT EXISTS {
       MATCH (l:Lease {space: $space, job: j.job})
       WHERE l.holder = j.holder AND l.expires_at >= datetime()
     } AS stale
RETURN j {.id, .space, .job, .dry_run, .counts, .errors, .sample, .trigger, .duration_ms,
          status: CASE WHEN stale THEN 'interrupted' ELSE j.status END,
          started_at: toString(j.started_at), ended_at: toString(j.ended_at)} AS run

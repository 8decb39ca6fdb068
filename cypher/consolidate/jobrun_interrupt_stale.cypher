// Runs still 'running' whose runner no longer holds a live lease of their job (it crashed, or
// lost the lease) are stored as interrupted.
MATCH (j:JobRun {space: $space})
WHERE j.status = 'running'
  AND NOT EXISTS {
    MATCH (l:Lease {space: $space, job: j.job})
    WHERE l.holder = j.holder AND l.expires_at >= datetime()
  }
SET j.status = 'interrupted', j.ended_at = datetime()
RETURN count(j) AS interrupted

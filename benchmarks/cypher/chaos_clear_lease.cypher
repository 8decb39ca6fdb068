// The reliability campaign only: remove a job lease that is still held after the harness's
// longest wait, so the next crash trial can run the job (the trial records that it did).
MATCH (l:Lease {space: $space, job: $job})
DELETE l
RETURN count(*) AS cleared

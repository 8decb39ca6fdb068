// Recorded job runs of every space by job and status, with their total duration (/metrics).
MATCH (r:JobRun)
RETURN r.job AS job, r.status AS status, count(r) AS runs,
       sum(coalesce(r.duration_ms, 0.0)) AS duration_ms

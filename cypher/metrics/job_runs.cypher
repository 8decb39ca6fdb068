// Recorded job runs of every space by job and status: how many, their total duration, and how
// many took at most each of $bounds_ms (the /metrics duration histogram's buckets), counted by
// the database (index size($bounds_ms) of the unwound range stands for "any duration").
MATCH (r:JobRun)
WITH r.job AS job, r.status AS status, coalesce(r.duration_ms, 0.0) AS ms
UNWIND range(0, size($bounds_ms)) AS i
WITH job, status, i,
     sum(CASE WHEN i = size($bounds_ms) OR ms <= $bounds_ms[i] THEN 1 ELSE 0 END) AS n,
     sum(CASE WHEN i = size($bounds_ms) THEN ms ELSE 0.0 END) AS ms
ORDER BY i
WITH job, status, collect(n) AS counts, sum(ms) AS duration_ms
RETURN job, status, counts[-1] AS runs, duration_ms, counts[0..-1] AS at_most

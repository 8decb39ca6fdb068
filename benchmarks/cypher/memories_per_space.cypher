// Benchmarks: memories per space already in the database (a warning before a run).
MATCH (m:Memory)
RETURN m.space AS space, count(*) AS memories
ORDER BY memories DESC

MATCH (l:Lease {space: $space, job: $job})
WHERE l.holder = $holder
DELETE l
RETURN count(*) AS released

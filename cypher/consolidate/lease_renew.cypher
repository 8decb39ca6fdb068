// Extend our lease; returns nothing when another runner holds it now.
MATCH (l:Lease {space: $space, job: $job})
WHERE l.holder = $holder
SET l.expires_at = datetime() + duration({seconds: $ttl})
RETURN l.expires_at AS expires_at

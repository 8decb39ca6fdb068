// Take the lease of (space, job) if it is free, expired or already ours. The dummy write locks
// the node first, so two runners cannot both see it free (the second waits, then reads the
// first one's holder).
MERGE (l:Lease {space: $space, job: $job})
ON CREATE SET l.created_at = datetime()
SET l._lock = true
WITH l, (l.holder IS NULL OR l.holder = $holder OR l.expires_at < datetime()) AS free,
     l.holder AS previous, l.expires_at < datetime() AS expired
SET l.holder = CASE WHEN free THEN $holder ELSE l.holder END,
    l.expires_at = CASE WHEN free THEN datetime() + duration({seconds: $ttl}) ELSE l.expires_at END,
    l.acquired_at = CASE WHEN free THEN datetime() ELSE l.acquired_at END,
    l.caption = 'lease ' + $job
REMOVE l._lock
RETURN free AS acquired, l.holder AS holder, l.expires_at AS expires_at,
       CASE WHEN free AND expired THEN previous END AS expired_holder

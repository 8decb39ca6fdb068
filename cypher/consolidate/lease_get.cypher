MATCH (l:Lease {space: $space, job: $job})
RETURN l.holder AS holder, l.expires_at AS expires_at, l.expires_at < datetime() AS expired

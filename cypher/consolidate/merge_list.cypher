MATCH (x:Merge {space: $space})
WHERE $status IS NULL OR x.status = $status
WITH x ORDER BY x.at DESC, x.id
SKIP $skip LIMIT $limit
RETURN x {.id, kind: coalesce(x.kind, 'memory'), .canonical, .duplicates, .similarities, .lexical, .reason, .by, .status,
          at: toString(x.at), undone_at: toString(x.undone_at)} AS merge

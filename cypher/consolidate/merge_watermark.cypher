// The incremental merge watermark of the space, the set of undone (blocked) merge pairs, and
// the server's clock (the next watermark is derived from it).
MATCH (s:Space {id: $space})
OPTIONAL MATCH (x:Merge {space: $space})
WHERE x.status = 'undone' AND coalesce(x.kind, 'memory') = 'memory'
RETURN s.merge_checked_until AS watermark, datetime() AS now,
       collect({canonical: x.canonical, duplicates: x.duplicates}) AS undone

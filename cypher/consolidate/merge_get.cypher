MATCH (x:Merge {space: $space, id: $id})
RETURN x {.id, kind: coalesce(x.kind, 'memory'), .canonical, .duplicates, .prior_statuses, .similarities, .lexical, .reason, .by,
          .status, .canonical_before, .canonical_after,
          at: toString(x.at), undone_at: toString(x.undone_at)} AS merge

// slide: What consolidation changed
// title: Supersession chains
// view: table
// A newer statement `SUPERSEDES` an older one (a changed address, a new favourite): the older
// stays, marked `superseded`. One row per chain, oldest version first; every link can be
// reverted through the API (`revert`), which restores the older version's status.
MATCH (newest:Memory|Fact {space: $space})
WHERE EXISTS { (newest)-[:SUPERSEDES]->() } AND NOT EXISTS { ()-[:SUPERSEDES]->(newest) }
MATCH p = (newest)-[:SUPERSEDES*1..20]->(oldest)
WHERE NOT EXISTS { (oldest)-[:SUPERSEDES]->() }
RETURN labels(newest)[0] AS kind,
       [x IN reverse(nodes(p)) | x.status + ': ' + coalesce(x.text, x.caption)] AS versions,
       [r IN reverse(relationships(p)) |
         r {.kind, .rule, .reason, .by, at: toString(r.at),
            revert: 'POST /v1/spaces/' + $space + '/supersessions/' + r.id + '/revert'}] AS links
ORDER BY newest.event_time DESC
LIMIT 100

// The supersession chain a memory belongs to (older and newer versions), in time order, with
// the edges between them.
MATCH (m:Memory {space: $space, id: $id})
CALL (m) {
  MATCH (m)-[:SUPERSEDES*0..50]-(x:Memory)
  RETURN collect(DISTINCT x) AS chain
}
UNWIND chain AS x
OPTIONAL MATCH (x)-[r:SUPERSEDES]->(y:Memory)
WHERE y IN chain
WITH x, collect(CASE WHEN r IS NULL THEN null ELSE
       r {.id, .reason, .by, .rule, .attribute, .old_value, .new_value, at: toString(r.at),
          valid_from: toString(datetime({datetime: coalesce(r.valid_from, r.at),
                                         timezone: '+00:00'})),
          recorded_at: toString(datetime({datetime: coalesce(r.recorded_at, r.at),
                                          timezone: '+00:00'})),
          older: y.id} END) AS supersedes
RETURN x {.id, .text, .status, .speaker, .role, event_time: toString(x.event_time)} AS memory,
       supersedes
ORDER BY x.event_time, x.ingested_at, x.id

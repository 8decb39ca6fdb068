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
WITH x, y, r, coalesce(r.valid_from, r.at) AS valid, coalesce(r.recorded_at, r.at) AS recorded
// An edge without its times (stored by hand) reads with null times, never a query error.
WITH x, collect(CASE WHEN r IS NULL THEN null ELSE
       r {.id, .reason, .by, .rule, .attribute, .old_value, .new_value, at: toString(r.at),
          valid_from: CASE WHEN valid IS NULL THEN null
                           ELSE toString(datetime({datetime: valid, timezone: '+00:00'})) END,
          recorded_at: CASE WHEN recorded IS NULL THEN null
                            ELSE toString(datetime({datetime: recorded, timezone: '+00:00'})) END,
          older: y.id} END) AS supersedes
RETURN x {.id, .text, .status, .speaker, .role, event_time: toString(x.event_time)} AS memory,
       supersedes
ORDER BY x.event_time, x.ingested_at, x.id

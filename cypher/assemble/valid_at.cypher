// Which of these memories were valid at $as_of (valid time) as the server knew it at $known_at
// (recorded time); either may be null (not asked). Valid time: the memory existed
// (event_time <= $as_of) and no supersession of it had become true by then (its valid_from;
// an edge without one, written before migration 0008 or by an older build, counts from its
// `at`, as before). Recorded time: the server had stored the memory
// (ingested_at <= $known_at) and not yet recorded such a supersession (recorded_at, else at).
// An undated edge counts on both clocks. Status 'superseded' without any edge: time unknown,
// left out.
// $include_superseded keeps superseded memories anyway.
UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
WHERE ($as_of IS NULL OR m.event_time <= $as_of)
  AND ($known_at IS NULL OR m.ingested_at <= $known_at)
  AND m.status IN ['active', 'superseded']
  AND ($include_superseded OR (
    NOT EXISTS {
      (:Memory)-[r:SUPERSEDES]->(m)
      WHERE ($as_of IS NULL OR coalesce(r.valid_from, r.at, $as_of) <= $as_of)
        AND ($known_at IS NULL OR coalesce(r.recorded_at, r.at, $known_at) <= $known_at)
    }
    AND (m.status = 'active' OR EXISTS { (:Memory)-[:SUPERSEDES]->(m) })
  ))
RETURN m.id AS id

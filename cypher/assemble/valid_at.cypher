// Which of these memories were valid at $as_of: they existed (event_time <= $as_of) and had
// not been superseded by then. Superseded at $as_of = a SUPERSEDES edge into the memory dated
// at or before $as_of (an undated edge counts), or status 'superseded' without any edge (time
// unknown). $include_superseded keeps superseded memories anyway.
UNWIND $ids AS id
MATCH (m:Memory {space: $space, id: id})
WHERE m.event_time <= $as_of
  AND m.status IN ['active', 'superseded']
  AND ($include_superseded OR (
    NOT EXISTS { (:Memory)-[r:SUPERSEDES]->(m) WHERE r.at IS NULL OR r.at <= $as_of }
    AND (m.status = 'active' OR EXISTS { (:Memory)-[:SUPERSEDES]->(m) })
  ))
RETURN m.id AS id

// Whether the space has explicit (label) stages, and its size.
CALL () { MATCH (s:Stage {space: $space}) WHERE s.kind = 'label' RETURN count(s) AS labelled }
CALL () { MATCH (m:Memory {space: $space}) WHERE m.status = 'active' RETURN count(m) AS active }
RETURN labelled, active

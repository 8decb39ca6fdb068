UNWIND $stages AS st
MERGE (s:Stage {space: $space, id: st.id})
ON CREATE SET s.kind = st.kind, s.name = st.name, s.started_at = st.start, s.ended_at = st.end,
              s.created_at = datetime()
SET s.started_at = CASE WHEN st.start < s.started_at THEN st.start ELSE s.started_at END,
    s.ended_at = CASE WHEN st.end > s.ended_at THEN st.end ELSE s.ended_at END,
    s.caption = 'stage ' + s.name
RETURN count(s) AS stages

// Community stages of the plan (names are set from their entities once members have moved).
UNWIND $stages AS st
MERGE (s:Stage {space: $space, id: st.id})
ON CREATE SET s.created_at = datetime(), s.started_at = st.start, s.ended_at = st.end,
              s.name = st.name, s.caption = 'stage ' + st.name
SET s.kind = 'community', s.community_size = st.size
RETURN count(s) AS stages

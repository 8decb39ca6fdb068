// Pairs whose supersession was reverted: the job never proposes them again.
MATCH (s:Space {id: $space})
RETURN coalesce(s.supersede_reverted, []) AS pairs

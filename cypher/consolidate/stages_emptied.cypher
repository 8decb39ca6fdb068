// Derived (gap/community) stages nothing belongs to any more: about to be deleted. Where their
// units went (moved_to) and the ids they had absorbed before.
MATCH (s:Stage {space: $space})
WHERE s.kind IN ['gap', 'community'] AND NOT EXISTS { ()-[:IN_STAGE]->(s) }
RETURN s.id AS id, coalesce(s.moved_to, []) AS moved_to, coalesce(s.absorbed, []) AS absorbed

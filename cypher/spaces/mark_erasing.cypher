// The first step of erasing a space: mark it (under its write lock, so after every write
// transaction already holding the lock has committed). From then on the space reads as absent
// and every write into it fails; an erasure that was interrupted is resumed by the next DELETE.
MATCH (s:Space {id: $space})
SET s.erasing = coalesce(s.erasing, datetime())
RETURN s.id AS id

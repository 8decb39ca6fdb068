MATCH (s:Space {id: $space})
SET s.merge_checked_until = $watermark
RETURN s.merge_checked_until AS watermark

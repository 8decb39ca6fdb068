MATCH (f:Fact {space: $space})
WHERE ($category IS NULL OR f.category = $category)
  AND ($speaker IS NULL OR f.speaker = $speaker)
  AND ($include_superseded OR f.status = 'active')
RETURN f {.id, .category, .text, .speaker, .role, .confidence, .rule, .source_id, .status,
          event_time: toString(f.event_time)} AS fact
ORDER BY f.event_time, f.id
SKIP $skip LIMIT $limit

// Tests only: the full-text space tags of a space's memories, with counts.
MATCH (m:Memory {space: $space})
RETURN m.space_tag AS tag, count(*) AS n
ORDER BY tag

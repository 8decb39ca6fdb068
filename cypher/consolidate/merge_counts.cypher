// How many active memories the space has, and how many arrived since the watermark.
MATCH (m:Memory {space: $space})
WHERE m.status = 'active' AND m.embedding IS NOT NULL
RETURN count(m) AS active,
       count(CASE WHEN $watermark IS NULL OR m.ingested_at >= $watermark THEN 1 END) AS fresh

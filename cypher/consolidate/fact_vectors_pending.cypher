// Facts of the space, of the embedded categories, without an embedding, by id after the cursor
// $after (the (space, id) constraint keeps each page cheap).
MATCH (f:Fact {space: $space})
WHERE f.id > $after AND f.category IN $categories AND f.embedding IS NULL
RETURN f.id AS id, f.text AS text
ORDER BY f.id
LIMIT $limit

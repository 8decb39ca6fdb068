// How many facts of the space, of the embedded categories, have no embedding.
MATCH (f:Fact {space: $space})
WHERE f.category IN $categories AND f.embedding IS NULL
RETURN count(f) AS pending

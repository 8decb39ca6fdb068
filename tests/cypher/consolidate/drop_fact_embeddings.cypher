// Tests only: remove the embeddings of the space's facts (as if stored before ingest embedded
// them), standing statements excepted.
MATCH (f:Fact {space: $space})
WHERE NOT f.category IN ['instruction', 'preference']
REMOVE f.embedding
RETURN count(f) AS dropped

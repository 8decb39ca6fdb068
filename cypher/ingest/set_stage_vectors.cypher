// Stage centroids: the running mean of the embeddings of the stage's memories, and how many
// memories it averages (pipelines.ingest.vectors).
UNWIND $rows AS row
MATCH (s:Stage {space: $space, id: row.key})
CALL db.create.setNodeVectorProperty(s, 'embedding', row.embedding)
SET s.embedding_n = row.n
RETURN count(s) AS updated

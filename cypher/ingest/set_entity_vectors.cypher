// Entity vectors: the running mean of the embeddings of the memories mentioning the entity,
// and how many memories it averages (pipelines.ingest.vectors).
UNWIND $rows AS row
MATCH (e:Entity {space: $space, key: row.key})
CALL db.create.setNodeVectorProperty(e, 'embedding', row.embedding)
SET e.embedding_n = row.n
RETURN count(e) AS updated

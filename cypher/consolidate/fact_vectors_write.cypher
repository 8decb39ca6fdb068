// Store computed fact embeddings (float32). A fact whose text is not the text embedded (it
// changed meanwhile) or that got an embedding meanwhile is left alone.
UNWIND $rows AS row
MATCH (f:Fact {space: $space, id: row.id})
WHERE f.text = row.text AND f.embedding IS NULL
CALL db.create.setNodeVectorProperty(f, 'embedding', row.embedding)
RETURN count(f) AS written

// Facts of the embedded categories carry the embedding of their text (ingest, or the
// fact_vectors job for facts stored before): context assembly recalls them as its compact tier.
// A space small enough is scanned exactly; a large one is searched through this index,
// over-fetched and post-filtered by space.
CREATE VECTOR INDEX fact_embedding IF NOT EXISTS FOR (f:Fact) ON f.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}}

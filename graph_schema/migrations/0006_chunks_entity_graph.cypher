// Long memories are indexed as chunks (pipelines.ingest.chunking): each Chunk carries its
// space, its memory's id, its span of the memory's text, the text itself (for the full-text
// entry), its embedding and late-interaction token vectors; (:Chunk)-[:CHUNK_OF]->(:Memory).
// A memory that fits the embedder's window has no Chunk nodes. Entity candidates wait for a
// second sighting before they become entities (pipelines.ingest.entity_graph). Entities and
// stages keep a vector (the mean of the memories that mention them / belong to them), with
// native vector indexes. Standing instructions and preferences are facts looked up by
// category within a space.
CREATE CONSTRAINT chunk_key IF NOT EXISTS FOR (c:Chunk) REQUIRE (c.space, c.id) IS UNIQUE;
CREATE INDEX chunk_space IF NOT EXISTS FOR (c:Chunk) ON (c.space);
CREATE INDEX chunk_memory IF NOT EXISTS FOR (c:Chunk) ON (c.space, c.memory_id);
CREATE CONSTRAINT entity_candidate_key IF NOT EXISTS FOR (c:EntityCandidate) REQUIRE (c.space, c.key) IS UNIQUE;
CREATE INDEX entity_candidate_space IF NOT EXISTS FOR (c:EntityCandidate) ON (c.space);
CREATE INDEX entity_candidate_memory IF NOT EXISTS FOR (c:EntityCandidate) ON (c.space, c.memory);
CREATE INDEX fact_space_category IF NOT EXISTS FOR (f:Fact) ON (f.space, f.category);
CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (c:Chunk) ON c.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (e:Entity) ON e.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CREATE VECTOR INDEX stage_embedding IF NOT EXISTS FOR (s:Stage) ON s.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CREATE FULLTEXT INDEX chunk_text IF NOT EXISTS FOR (c:Chunk) ON EACH [c.text, c.space_tag]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}}

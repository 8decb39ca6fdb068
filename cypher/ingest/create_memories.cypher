// New memories (the caller filtered out ids that exist). Embeddings are stored as float32;
// token vectors (late interaction) as int8 bytes, with their format (null when not computed).
UNWIND $rows AS row
CREATE (m:Memory {space: $space, id: row.id})
SET m.space_tag = $space_tag, m.text = row.text, m.role = row.role, m.speaker = row.speaker, m.kind = row.kind,
    m.tags = row.tags, m.event_time = row.event_time, m.ingested_at = datetime(),
    m.content_hash = row.content_hash, m.session_id = row.session_id,
    m.turn_index = row.turn_index, m.stage_id = row.stage_id, m.status = 'active',
    m.heat = row.heat, m.access_count = 0, m.importance = row.importance,
    m.gate = row.gate, m.metadata = row.metadata, m.caption = row.caption,
    m.token_vectors = row.tokens, m.token_format = row.token_format
WITH m, row
CALL db.create.setNodeVectorProperty(m, 'embedding', row.embedding)
WITH m, row
MATCH (st:Stage {space: $space, id: row.stage_id})
MERGE (m)-[:IN_STAGE]->(st)
WITH m, row
OPTIONAL MATCH (s:Session {space: $space, id: row.session_id})
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | MERGE (m)-[:IN_SESSION]->(s))
RETURN count(m) AS created

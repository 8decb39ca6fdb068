// Facts of new memories, each EXTRACTED_FROM its memory; an embedded one's vector is stored as
// float32 (pipelines.assemble.facts scans them).
UNWIND $facts AS f
MATCH (m:Memory {space: $space, id: f.source_id})
MERGE (x:Fact {space: $space, id: f.id})
ON CREATE SET x.category = f.category, x.text = f.text, x.speaker = f.speaker, x.role = f.role,
              x.confidence = f.confidence, x.rule = f.rule, x.source_id = f.source_id,
              x.event_time = m.event_time, x.status = 'active', x.created_at = datetime(),
              x.caption = f.category + ': ' + left(f.text, 60)
MERGE (x)-[:EXTRACTED_FROM]->(m)
WITH x, f
CALL (x, f) {
  WITH x, f
  WHERE f.embedding IS NOT NULL AND x.embedding IS NULL
  CALL db.create.setNodeVectorProperty(x, 'embedding', f.embedding)
}
RETURN count(x) AS facts

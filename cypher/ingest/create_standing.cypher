// Standing instructions and preferences of new user turns: facts of their own category, with
// the turn as provenance (EXTRACTED_FROM, source_id), the embedding supersession compares and,
// for a statement conditioned on a topic, the topic and its embedding (recall matches it).
UNWIND $facts AS f
MATCH (m:Memory {space: $space, id: f.source_id})
MERGE (x:Fact {space: $space, id: f.id})
ON CREATE SET x.category = f.category, x.text = f.text, x.speaker = f.speaker, x.role = f.role,
              x.confidence = f.confidence, x.rule = f.rule, x.source_id = f.source_id,
              x.change = f.change, x.negated = f.negated, x.embedding = f.embedding,
              x.condition = f.condition, x.condition_embedding = f.condition_embedding,
              x.event_time = m.event_time, x.status = 'active', x.created_at = datetime(),
              x.caption = f.category + ': ' + left(f.text, 60)
MERGE (x)-[:EXTRACTED_FROM]->(m)
RETURN count(x) AS facts

// Neo4j Browser: an entity's timeline, every memory that mentions it in time order
// (:param space => 'demo'; :param entity => 'boston').
MATCH (e:Entity {space: $space, key: $entity})<-[:MENTIONS]-(m:Memory)
RETURN m.event_time AS time, m.speaker AS speaker, m.text AS text, m.stage_id AS stage,
       m.status AS status
ORDER BY m.event_time, m.turn_index

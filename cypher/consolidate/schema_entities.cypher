// Names and kinds of the entities the given stages' memories mention.
UNWIND $stages AS sid
MATCH (:Stage {space: $space, id: sid})<-[:IN_STAGE]-(m:Memory)-[:MENTIONS]->(e:Entity)
WHERE m.status = 'active'
RETURN DISTINCT e.key AS key, e.name AS name, e.kind AS kind

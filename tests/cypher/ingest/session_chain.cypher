// A session's memories in turn order, with the memory each links NEXT to (tests).
MATCH (:Session {space: $space, id: $session_id})<-[:IN_SESSION]-(m:Memory)
OPTIONAL MATCH (m)-[:NEXT]->(n:Memory)
RETURN m.id AS id, m.turn_index AS turn_index, collect(n.id) AS next
ORDER BY m.turn_index

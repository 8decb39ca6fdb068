// The last memories (by turn index) of sessions that already exist, for a session arriving in
// parts: the writer numbers the new turns after the earlier part and links NEXT across.
UNWIND $sessions AS s
MATCH (:Session {space: $space, id: s.id})<-[:IN_SESSION]-(m:Memory)
WHERE m.turn_index IS NOT NULL
WITH s, m ORDER BY m.turn_index DESC
WITH s, collect({id: m.id, turn_index: m.turn_index})[..s.n] AS last
RETURN s.id AS session_id, last

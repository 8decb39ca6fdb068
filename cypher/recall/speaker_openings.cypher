// Turns that may open by addressing someone by name ("Hey Mel!", "Thanks, Caroline"), with
// the speakers of their session (at most three: only two-person sessions teach a name):
// recall learns from them the names people call each other by. The newest $limit such
// turns, their first 160 characters.
MATCH (m:Memory {space: $space})
WHERE m.status = 'active' AND left(m.text, 160) =~ $opening
WITH m
ORDER BY m.event_time DESC
LIMIT $limit
MATCH (m)-[:IN_SESSION]->(s:Session)
WITH s, collect([m.speaker, left(m.text, 160)]) AS openings
CALL (s) {
  MATCH (s)<-[:IN_SESSION]-(o:Memory)
  RETURN collect(DISTINCT o.speaker)[..3] AS speakers
}
RETURN speakers, openings

// slide: Spaces
// title: Spaces and their sizes
// view: table
// Every space with what it holds. A space is one separate memory: every node carries its
// `space` and no edge crosses from one space to another. `active` counts the memories recall
// reads; the others were superseded, merged into a duplicate or archived.
MATCH (s:Space)
RETURN s.id AS space, s.name AS name,
       COUNT { MATCH (m:Memory {space: s.id}) } AS memories,
       COUNT { MATCH (m:Memory {space: s.id}) WHERE m.status = 'active' } AS active,
       COUNT { MATCH (x:Session {space: s.id}) } AS sessions,
       COUNT { MATCH (x:Stage {space: s.id}) } AS stages,
       COUNT { MATCH (x:Entity {space: s.id}) } AS entities,
       COUNT { MATCH (x:Fact {space: s.id}) } AS facts,
       toString(s.created_at) AS created
ORDER BY memories DESC, space
LIMIT 100

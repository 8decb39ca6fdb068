// A hand-edited SUPERSEDES edge: no id, no times, a number for its reason.
MATCH (n:Memory {space: $space, id: $new}), (o:Memory {space: $space, id: $old})
CREATE (n)-[:SUPERSEDES {reason: 5}]->(o)

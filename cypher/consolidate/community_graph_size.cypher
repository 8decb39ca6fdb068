// An upper bound on the size of the community projection (see community_project): every
// memory and entity a node, every mention a relationship.
CALL () { MATCH (m:Memory {space: $space}) RETURN count(m) AS memories }
CALL () { MATCH (e:Entity {space: $space}) RETURN count(e) AS entities }
CALL () { MATCH (:Memory {space: $space})-[r:MENTIONS]->() RETURN count(r) AS mentions }
RETURN memories + entities AS nodes, mentions AS relationships

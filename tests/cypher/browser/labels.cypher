// The first label of every node in a space, once each.
MATCH (n {space: $space}) RETURN DISTINCT labels(n)[0] AS l

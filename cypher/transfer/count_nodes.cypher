// How many nodes of one label the space holds (import verification).
MATCH (n:__LABEL__ {space: $space})
RETURN count(n) AS n

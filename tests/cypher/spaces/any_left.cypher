// Every node of a space, whatever its label (a test of erasure: the answer must be 0).
MATCH (n)
WHERE n.space = $space
RETURN count(n) AS nodes, collect(DISTINCT labels(n)[0])[..10] AS labels

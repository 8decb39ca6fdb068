// Set the probe node's value
MATCH (n:FaultsProbe {id: $id})
SET n.v = $v
RETURN n.v AS v

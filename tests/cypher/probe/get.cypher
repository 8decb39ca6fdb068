// The probe node's value
MATCH (n:FaultsProbe {id: $id})
RETURN n.v AS v

// Remove the probe node
MATCH (n:FaultsProbe {id: $id})
DELETE n

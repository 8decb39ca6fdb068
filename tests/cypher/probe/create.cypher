// A probe node of test_graph_outcomes (its own label, a random id)
CREATE (n:FaultsProbe {id: $id})
RETURN n.id AS id

// NEXT links where at least one end was created in this transaction (no link to merge with).
UNWIND $pairs AS p
MATCH (a:Memory {space: $space, id: p[0]}), (b:Memory {space: $space, id: p[1]})
CREATE (a)-[:NEXT]->(b)
RETURN count(*) AS linked

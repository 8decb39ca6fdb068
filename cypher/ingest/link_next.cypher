UNWIND $pairs AS p
MATCH (a:Memory {space: $space, id: p[0]}), (b:Memory {space: $space, id: p[1]})
MERGE (a)-[:NEXT]->(b)
RETURN count(*) AS linked

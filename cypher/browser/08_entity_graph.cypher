// slide: PageRank
// title: The entity co-occurrence graph
// view: graph
// The 150 strongest `CO_OCCURS` edges of the space: the graph that Personalized PageRank walks
// when context assembly looks for what is related to a question's entities.
MATCH (a:Entity {space: $space})-[r:CO_OCCURS]->(b:Entity)
WITH a, r, b ORDER BY r.weight DESC, a.key, b.key LIMIT 150
RETURN a, r, b

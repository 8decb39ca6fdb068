// Map Leiden's (nodeId, communityId) rows back to the units (sessions or loose memories).
UNWIND $rows AS r
WITH gds.util.asNode(r.node) AS n, r.community AS community
WHERE n:Session OR n:Memory
RETURN CASE WHEN n:Session THEN 'session:' ELSE 'memory:' END + n.id AS unit, community

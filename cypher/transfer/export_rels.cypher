// The relationships leaving one page of a space's nodes of one label (export); only those
// whose other end is in the space. $labels: the exported labels (a node's first of them).
MATCH (a:__LABEL__ {space: $space})
WHERE $after IS NULL OR a.__KEY__ > $after
WITH a ORDER BY a.__KEY__ LIMIT $limit
OPTIONAL MATCH (a)-[r]->(b)
WHERE b.space = $space
WITH a, r, b, [l IN labels(b) WHERE l IN $labels][0] AS to_label
ORDER BY type(r), elementId(b)
RETURN a.__KEY__ AS key,
       collect(CASE WHEN r IS NULL OR to_label IS NULL THEN null ELSE
         {type: type(r), to_label: to_label,
          to: CASE to_label WHEN 'Entity' THEN b.key ELSE b.id END,
          props: properties(r)} END) AS out
ORDER BY key

// Live stages record the ids of deleted stages whose units they received (absorbed), so an id
// ingest handed out stays resolvable after communities re-grouped its sessions.
UNWIND $rows AS row
MATCH (t:Stage {space: $space, id: row.target})
WHERE EXISTS { ()-[:IN_STAGE]->(t) }
SET t.absorbed = reduce(acc = coalesce(t.absorbed, []), x IN row.ids |
                        CASE WHEN x IN acc OR x = t.id THEN acc ELSE acc + x END)
RETURN count(t) AS targets

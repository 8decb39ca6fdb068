// Community stage names chosen by pipelines.consolidate.stage_names.
UNWIND $names AS row
MATCH (st:Stage {space: $space, id: row.id})
WHERE st.kind = 'community'
SET st.name = row.name, st.caption = 'stage ' + row.name
RETURN count(st) AS named

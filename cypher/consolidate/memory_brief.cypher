MATCH (m:Memory {space: $space, id: $id})
OPTIONAL MATCH (newer:Memory)-[r:SUPERSEDES]->(m)
OPTIONAL MATCH (m)-[:MERGED_INTO]->(c:Memory)
RETURN m.id AS id, m.status AS status, m.speaker AS speaker, m.role AS role, m.kind AS kind,
       collect(DISTINCT newer.id) AS superseded_by, collect(DISTINCT c.id) AS merged_into

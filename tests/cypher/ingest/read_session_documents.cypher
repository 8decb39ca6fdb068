// Tests only: the session documents of a space (pipelines.session_documents).
MATCH (s:Session {space: $space})
RETURN s.id AS id, s.texts AS texts, s.space_tag AS space_tag
ORDER BY id

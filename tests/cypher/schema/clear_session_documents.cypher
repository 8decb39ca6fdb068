// Tests only: forget a space's session documents, as a database from before migration 0005.
MATCH (s:Session {space: $space})
REMOVE s.texts, s.space_tag
RETURN count(s) AS cleared

// The space node (import): created if missing, its properties replaced (idempotent).
MERGE (s:Space {id: $space})
SET s = $props
RETURN s.id AS id

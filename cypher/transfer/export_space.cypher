// The space node's properties (export).
MATCH (s:Space {id: $space})
RETURN properties(s) AS props

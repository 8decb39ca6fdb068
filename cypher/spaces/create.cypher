// Create a space; returns created=false when it already exists, and erasing=true when a space
// with this id is still being erased (the caller refuses: its id is not free yet).
MERGE (s:Space {id: $space})
ON CREATE SET s.created_at = datetime(), s.name = $name, s.description = $description,
              s.settings = $settings, s.caption = 'space ' + $space, s._new = true
WITH s, coalesce(s._new, false) AS created
REMOVE s._new
RETURN s {.id, .name, .description, .settings, created_at: toString(s.created_at)} AS space,
       created, s.erasing IS NOT NULL AS erasing

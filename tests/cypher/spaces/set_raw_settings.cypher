// Store a space's settings as given, unchecked (as a space created before settings were
// validated may hold them).
MATCH (s:Space {id: $space})
SET s.settings = $settings

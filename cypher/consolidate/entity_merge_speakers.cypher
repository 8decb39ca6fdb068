// The speakers of a space (case-folded), and the entity merges that were undone (never redone).
CALL () {
  MATCH (m:Memory {space: $space})
  WHERE m.speaker IS NOT NULL
  RETURN collect(DISTINCT toLower(m.speaker)) AS speakers
}
CALL () {
  OPTIONAL MATCH (x:Merge {space: $space})
  WHERE x.kind = 'entity' AND x.status = 'undone'
  RETURN collect([x.duplicates[0], x.canonical]) AS blocked
}
RETURN speakers, blocked

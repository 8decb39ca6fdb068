// slide: What consolidation changed
// title: Merges, and what can be undone
// view: table
// The merge job folds near-duplicate memories into one canonical memory (`MERGED_INTO`) and
// keeps a `Merge` record. An applied merge can be undone through the API (`undo`): the
// duplicates get their status back.
MATCH (x:Merge {space: $space})
OPTIONAL MATCH (c:Memory {space: $space, id: x.canonical})
CALL (x) {
  UNWIND x.duplicates AS duplicate
  MATCH (d:Memory {space: $space, id: duplicate})
  RETURN collect(d.status + ': ' + d.text) AS duplicates
}
RETURN x.id AS merge, x.status AS status, toString(x.at) AS at, x.by AS by,
       c.text AS canonical, duplicates, x.similarities AS similarities, x.reason AS reason,
       CASE x.status WHEN 'applied'
         THEN 'POST /v1/spaces/' + $space + '/merges/' + x.id + '/undo' END AS undo
ORDER BY x.at DESC
LIMIT 100

// Recompute the centroid of some stages of the space (pipelines.ingest.vectors): the mean
// embedding of the memories now in each, after the community job moved memories between
// stages. A stage without memory embeddings loses its vector.
// Only in a space whose ingest keeps stage vectors (IngestConfig.stage_vectors): elsewhere none
// is created.
OPTIONAL MATCH (kept:Stage {space: $space}) WHERE kept.embedding IS NOT NULL
WITH count(kept) AS kept WHERE kept > 0
UNWIND $ids AS sid
MATCH (st:Stage {space: $space, id: sid})
CALL (st) {
  OPTIONAL MATCH (m:Memory)-[:IN_STAGE]->(st)
  WHERE m.embedding IS NOT NULL
  RETURN collect(m.embedding) AS es
}
CALL (st, es) {
  WITH st, es WHERE size(es) > 0
  CALL db.create.setNodeVectorProperty(st, 'embedding',
    [i IN range(0, size(es[0]) - 1) | reduce(s = 0.0, e IN es | s + e[i]) / size(es)])
  SET st.embedding_n = size(es)
}
CALL (st, es) {
  WITH st, es WHERE size(es) = 0
  REMOVE st.embedding, st.embedding_n
}
RETURN count(st) AS stages

// Memories holding an identifier of the query verbatim (pipelines.recall.identifiers): per
// identifier, `memory_text` with its escaped phrase scoped to the space inside Lucene, then the
// text tested for the identifier itself (case-insensitive; the caller checks token bounds).
// Filters and statuses as in recall/candidates; rows have its shape (signal 'fulltext').
UNWIND range(0, size($identifiers) - 1) AS ii
CALL (ii) {
  CALL db.index.fulltext.queryNodes('memory_text', $identifiers[ii].lucene, {limit: $fetch})
  YIELD node, score
  WITH node AS m, score
  WHERE m.space = $space AND m.status IN $statuses
    AND toLower(m.text) CONTAINS $identifiers[ii].needle
    @include fragments/memory_filters
  RETURN m, score
  ORDER BY score DESC, m.id
  LIMIT $k
}
WITH m, max(score) AS score, collect(DISTINCT ii) AS matched
RETURN m.id AS id, m.text AS text, m.speaker AS speaker, m.role AS role, m.kind AS kind,
       m.session_id AS session_id, m.turn_index AS turn_index, m.stage_id AS stage_id,
       m.event_time.epochSeconds * 1000000 + m.event_time.microsecond AS event_time_us,
       m.ingested_at.epochSeconds * 1000000 + m.ingested_at.microsecond AS ingested_at_us,
       m.heat AS heat,
       m.last_access.epochSeconds * 1000000 + m.last_access.microsecond AS last_access_us,
       m.access_count AS access_count, m.status AS status, null AS named_speaker_session,
       [{signal: 'fulltext', qi: 0, score: score}] AS hits, coalesce(m.chunk_count, 0) AS chunk_count,
       matched
ORDER BY score DESC, id

// Chunk candidates: the long memories of the space whose chunks (pieces within the embedder's
// window, migration 0006) match the query, one row per memory with its best chunks. Only read
// when the space has chunks (pipelines.recall.steps.chunks); the request's filters apply to
// the chunk's memory, inside each signal.
//   vector   - exact cosine scan of the space's chunks ($exact: few enough), else the
//              approximate index `chunk_embedding`, over-fetched ($vector_fetch) and
//              post-filtered to the space.
//   fulltext - `chunk_text` with an escaped Lucene query restricted to the space inside Lucene
//              (`+space_tag:<tag>^0`); the `c.space` test stays (isolation never rests on the tag).
// Per signal, a memory keeps its best $per_memory chunks and the $vector_k / $fulltext_k best
// memories are returned. Scores are raw: the vector score is Neo4j's normalised cosine.
CALL () {
  UNWIND CASE WHEN $embedding IS NOT NULL AND $exact THEN [$embedding] ELSE [] END AS q
  MATCH (c:Chunk {space: $space})
  WHERE c.embedding IS NOT NULL
  RETURN 'vector' AS signal, c, vector.similarity.cosine(c.embedding, q) AS score
  UNION ALL
  UNWIND CASE WHEN $embedding IS NOT NULL AND NOT $exact THEN [$embedding] ELSE [] END AS q
  CALL db.index.vector.queryNodes('chunk_embedding', $vector_fetch, q) YIELD node, score
  WITH node AS c, score
  WHERE c.space = $space
  RETURN 'vector' AS signal, c, score
  UNION ALL
  UNWIND CASE WHEN $fulltext IS NULL THEN [] ELSE [$fulltext] END AS lucene
  CALL db.index.fulltext.queryNodes('chunk_text', lucene, {limit: $fulltext_fetch})
  YIELD node, score
  WITH node AS c, score
  WHERE c.space = $space
  RETURN 'fulltext' AS signal, c, score
}
MATCH (c)-[:CHUNK_OF]->(m:Memory {space: $space})
WHERE m.status IN $statuses
  @include fragments/memory_filters
WITH signal, m, c, score
ORDER BY score DESC, c.id
WITH signal, m, max(score) AS best,
     collect({signal: signal, id: c.id, index: c.index, start: c.start, end: c.end,
              score: score})[..$per_memory] AS chunks
ORDER BY best DESC, m.id
WITH signal, collect({m: m, best: best, chunks: chunks}) AS ranked
UNWIND ranked[..CASE signal WHEN 'vector' THEN $vector_k ELSE $fulltext_k END] AS hit
WITH hit.m AS m, collect({signal: signal, qi: 0, score: hit.best}) AS hits,
     reduce(acc = [], h IN collect(hit.chunks) | acc + h) AS chunks
// as recall/candidates: whether the memory's session has a turn by a speaker the query names
WITH m, hits, chunks,
     CASE WHEN size($query_speakers) = 0 OR NOT EXISTS { (m)-[:IN_SESSION]->(:Session) }
          THEN null
          ELSE toLower(m.speaker) IN $query_speakers OR EXISTS {
            MATCH (m)-[:IN_SESSION]->(:Session)<-[:IN_SESSION]-(o:Memory)
            WHERE o.space = $space AND toLower(o.speaker) IN $query_speakers
          } END AS named_speaker_session
RETURN m.id AS id, m.text AS text, m.speaker AS speaker, m.role AS role, m.kind AS kind,
       m.session_id AS session_id, m.turn_index AS turn_index, m.stage_id AS stage_id,
       m.event_time.epochSeconds * 1000000 + m.event_time.microsecond AS event_time_us,
       m.ingested_at.epochSeconds * 1000000 + m.ingested_at.microsecond AS ingested_at_us,
       m.heat AS heat,
       m.last_access.epochSeconds * 1000000 + m.last_access.microsecond AS last_access_us,
       m.access_count AS access_count, m.status AS status, named_speaker_session, hits,
       coalesce(m.chunk_count, 0) AS chunk_count, chunks

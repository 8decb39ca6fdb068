// Candidates of every retrieval signal in ONE round trip, scoped to the space, filtered by
// status and the request's filters inside each signal (so selective filters do not starve a
// signal), one row per distinct memory with the list of signal hits that found it.
//   vector   - exact cosine scan of the space ($exact: small spaces), of the requested stages
//              ($exact_stages: a stage filter small enough to scan), or the approximate index
//              `memory_embedding`, over-fetched ($vector_fetch) and post-filtered; one ranking
//              per query embedding (multi-query: index qi).
//   fulltext - `memory_text` with an escaped Lucene query restricted to the space inside Lucene
//              (`+space_tag:<tag>^0`, see pipelines.spaces.fulltext_tag), over-fetched for the
//              filters and post-filtered (the `m.space` test stays: isolation never rests on
//              the tag).
//   entity   - Entity keys named in the query -> MENTIONS; a memory scores the sum over the
//              entities it mentions of count / log(2 + entity mention count) (rarer = stronger).
//   window   - time windows named in the query ("in May 2023"): an exact cosine scan of the
//              memories inside each window (range seek on (space, event_time)).
//   heat, recency - only when $context_k > 0: the space's hottest and most recent memories.
// $query_speakers (lower case) are the speakers the query names, for named_speaker_session.
// Scores are raw: the vector score is Neo4j's normalised cosine (1 + cos) / 2. chunk_count: the
// memory's chunks (a long memory; 0 otherwise), whose own signals are recall/chunk_candidates.
CALL () {
  UNWIND CASE WHEN $exact THEN range(0, size($embeddings) - 1) ELSE [] END AS qi
  CALL (qi) {
    MATCH (m:Memory {space: $space})
    WHERE m.status IN $statuses AND m.embedding IS NOT NULL
      @include fragments/memory_filters
    WITH m, vector.similarity.cosine(m.embedding, $embeddings[qi]) AS score
    ORDER BY score DESC, m.id
    LIMIT $vector_k
    RETURN m, score
  }
  RETURN 'vector' AS signal, qi, m, score
  UNION ALL
  // Exact scan of the requested stages only ($exact_stages: a large space, but a stage filter
  // small enough to scan; the (space, stage_id) index finds its memories). Post-filtering the
  // global index by stage would need a huge over-fetch and still miss most of the stage.
  UNWIND CASE WHEN $exact_stages IS NULL THEN [] ELSE range(0, size($embeddings) - 1) END AS qi
  CALL (qi) {
    MATCH (m:Memory)
    USING INDEX m:Memory(space, stage_id)
    WHERE m.space = $space AND m.stage_id IN $exact_stages
      AND m.status IN $statuses AND m.embedding IS NOT NULL
      @include fragments/memory_filters
    WITH m, vector.similarity.cosine(m.embedding, $embeddings[qi]) AS score
    ORDER BY score DESC, m.id
    LIMIT $vector_k
    RETURN m, score
  }
  RETURN 'vector' AS signal, qi, m, score
  UNION ALL
  UNWIND CASE WHEN $exact OR $exact_stages IS NOT NULL THEN [] ELSE range(0, size($embeddings) - 1) END AS qi
  CALL (qi) {
    CALL db.index.vector.queryNodes('memory_embedding', $vector_fetch, $embeddings[qi])
    YIELD node, score
    WITH node AS m, score
    WHERE m.space = $space AND m.status IN $statuses
      @include fragments/memory_filters
    RETURN m, score
    ORDER BY score DESC, m.id
    LIMIT $vector_k
  }
  RETURN 'vector' AS signal, qi, m, score
  UNION ALL
  UNWIND CASE WHEN $fulltext IS NULL THEN [] ELSE [$fulltext] END AS lucene
  CALL (lucene) {
    CALL db.index.fulltext.queryNodes('memory_text', lucene, {limit: $fulltext_fetch})
    YIELD node, score
    WITH node AS m, score
    WHERE m.space = $space AND m.status IN $statuses
      @include fragments/memory_filters
    RETURN m, score
    ORDER BY score DESC, m.id
    LIMIT $fulltext_k
  }
  RETURN 'fulltext' AS signal, 0 AS qi, m, score
  UNION ALL
  MATCH (named:Entity {space: $space})
  WHERE named.key IN $entity_keys
  // an alias merged into another entity ("mel" -> "melanie") stands for its canonical
  OPTIONAL MATCH (named)-[:ALIAS_OF]->(canonical:Entity)
  WITH DISTINCT coalesce(canonical, named) AS e
  // Expand from each named entity. `m` carries no label on purpose: with `m:Memory` and the
  // `m.space` test the planner seeks every memory of the space in the (space, id) index and
  // probes each for an edge into `e` (647,000 db hits, 260 ms at 100,000 memories); only
  // memories have MENTIONS edges, and the space test stays.
  CALL (e) {
    MATCH (m)-[r:MENTIONS]->(e)
    WHERE m.space = $space AND m.status IN $statuses
      @include fragments/memory_filters
    RETURN m, coalesce(r.count, 1) / log(2.0 + coalesce(e.mention_count, 1)) AS part
  }
  WITH m, sum(part) AS score
  ORDER BY score DESC, m.event_time DESC, m.id
  LIMIT $entity_k
  RETURN 'entity' AS signal, 0 AS qi, m, score
  UNION ALL
  UNWIND range(0, size($windows) - 1) AS wi
  CALL (wi) {
    MATCH (m:Memory {space: $space})
    WHERE m.event_time >= $windows[wi].start AND m.event_time < $windows[wi].end
      AND m.status IN $statuses AND m.embedding IS NOT NULL
      @include fragments/memory_filters
    WITH m, vector.similarity.cosine(m.embedding, $embeddings[0]) AS score
    ORDER BY score DESC, m.id
    LIMIT $window_k
    RETURN m, score
  }
  RETURN 'window' AS signal, wi AS qi, m, score
  UNION ALL
  UNWIND CASE WHEN $context_k > 0 THEN ['heat', 'recency'] ELSE [] END AS signal
  CALL (signal) {
    MATCH (m:Memory {space: $space})
    WHERE m.status IN $statuses
      @include fragments/memory_filters
    WITH m, CASE signal WHEN 'heat' THEN coalesce(m.heat, 0.0)
                        ELSE m.event_time.epochMillis / 1000.0 END AS score
    ORDER BY score DESC, m.id
    LIMIT $context_k
    RETURN m, score
  }
  RETURN signal, 0 AS qi, m, score
}
WITH m, collect({signal: signal, qi: qi, score: score}) AS hits
// Whether the memory's conversation session has a turn by a speaker the query names (null when
// it names none, or the memory has no session): a query about "Caroline" is about the
// conversations she took part in, not only about her own turns.
WITH m, hits,
     CASE WHEN size($query_speakers) = 0 OR NOT EXISTS { (m)-[:IN_SESSION]->(:Session) }
          THEN null
          // (a pattern never uses one relationship twice: m's own turn is tested apart)
          ELSE toLower(m.speaker) IN $query_speakers OR EXISTS {
            MATCH (m)-[:IN_SESSION]->(:Session)<-[:IN_SESSION]-(o:Memory)
            WHERE o.space = $space AND toLower(o.speaker) IN $query_speakers
          } END AS named_speaker_session
// Times travel as integer microseconds since the epoch: hydrating hundreds of driver DateTime
// values per recall cost more than the query itself (pipelines.graph.from_epoch_micros).
RETURN m.id AS id, m.text AS text, m.speaker AS speaker, m.role AS role, m.kind AS kind,
       m.session_id AS session_id, m.turn_index AS turn_index, m.stage_id AS stage_id,
       m.event_time.epochSeconds * 1000000 + m.event_time.microsecond AS event_time_us,
       m.ingested_at.epochSeconds * 1000000 + m.ingested_at.microsecond AS ingested_at_us,
       m.heat AS heat,
       m.last_access.epochSeconds * 1000000 + m.last_access.microsecond AS last_access_us,
       m.access_count AS access_count, m.status AS status, named_speaker_session, hits,
       coalesce(m.chunk_count, 0) AS chunk_count

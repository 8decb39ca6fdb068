"""Search as configuration: named, typed recall presets.

A preset says *which* pieces of the read path run (signals, reranking, selection, query
understanding); :class:`~pipelines.recall.config.RecallConfig` says *how* they are tuned.
Every preset is a frozen model, so a benchmark can report them side by side and a request
can name one (``preset`` in the recall body):

* ``dense`` — the vector signal only (cosine over the embedding index).
* ``fulltext`` — the full-text (BM25) signal only, on an escaped Lucene query.
* ``fused`` — weighted reciprocal rank fusion of every signal (vector, full-text, entities
  named in the query, heat, recency) with the intent's weight profile.
* ``fused_rerank`` — ``fused`` plus the reranker: the FlashRank cross-encoder when it is
  loaded, else the no-weights context reranker (a turn scored with its neighbours).
* ``full`` — ``fused_rerank`` plus query understanding (speakers named in the query, time
  expressions as boosts and as candidate windows, time order for event-order questions),
  session documents, late interaction (MaxSim over the embedding model's token vectors, per
  memory and per conversation session) and MMR selection with session novelty. Multi-query
  decomposition is available (``decompose``) but off: it did not pay on LoCoMo.
* ``full_no_late`` — ``full`` without late interaction, at either level (the benchmark
  reports both, so the steps' contribution is visible).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipelines.recall.config import (
    DEFAULT_SIGNALS,
    SIGNAL_FULLTEXT,
    SIGNAL_VECTOR,
)


class RecallPreset(BaseModel):
    """Which stages of recall run. Frozen; derive variants with ``model_copy(update=...)``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    signals: tuple[str, ...] = Field(min_length=1)
    #: Use the intent's weight profile; off means the semantic (balanced) profile always.
    intent_profiles: bool = True
    #: Rerank the head of the fused list (cross-encoder if loaded, else the fallback).
    rerank: bool = False
    #: Greedy MMR selection over the oversampled candidates (by count, never tokens).
    selection: bool = False
    #: Multi-query decomposition: each sub-query adds a vector ranking.
    decompose: bool = False
    #: Resolve time expressions ("last March") against the question time and boost matches.
    time_expressions: bool = False
    #: Speakers named in the query: search the content without the names and boost the
    #: memories those speakers said.
    speakers: bool = False
    #: Event-order questions get their results back in time order when the request asks
    #: for ``order="auto"`` (the default order is rank order).
    event_order: bool = False
    #: Scale down conversation turns that end by asking a question
    #: (``question_turn_factor``): a question asks for information and rarely holds it; the
    #: answer does. Other kinds of memory (a note that asks something) are left alone.
    question_prior: bool = False
    #: Lift candidates of the sessions that BM25 over whole-session documents ranks high
    #: (:func:`~pipelines.recall.fusion.session_rank_boost`), after reranking. Left out
    #: when the request has a ``time_to`` filter (``as_of``: a session's document holds
    #: texts written after it), a stage filter or a one-session filter (the lift would be
    #: about the same for every candidate). The same rules turn on session novelty in MMR
    #: selection (``session_novelty``) and, with ``late_interaction``, the session-level
    #: late interaction.
    session_documents: bool = False
    #: Rescore the head of the list by late interaction (MaxSim over the embedding model's
    #: token vectors, stored at ingest; :mod:`pipelines.models.late_interaction`): a
    #: reranker that needs no new weights. Memories without token vectors are left unscored.
    #: With ``session_documents``, conversation sessions are scored the same way over all of
    #: their memories' token vectors, and their candidates lifted by that rank.
    late_interaction: bool = False

    @model_validator(mode="after")
    def _check(self) -> RecallPreset:
        unknown = [s for s in self.signals if s not in DEFAULT_SIGNALS]
        if unknown:
            raise ValueError(f"unknown signals {unknown}; known: {list(DEFAULT_SIGNALS)}")
        if len(set(self.signals)) != len(self.signals):
            raise ValueError("signals must be unique")
        return self


DENSE = RecallPreset(
    name="dense",
    description="Vector similarity only.",
    signals=(SIGNAL_VECTOR,),
    intent_profiles=False,
)
FULLTEXT = RecallPreset(
    name="fulltext",
    description="Full-text (BM25) only, on an escaped Lucene query.",
    signals=(SIGNAL_FULLTEXT,),
    intent_profiles=False,
)
FUSED = RecallPreset(
    name="fused",
    description="Weighted RRF of vector, full-text, entity, heat and recency signals.",
    signals=DEFAULT_SIGNALS,
)
FUSED_RERANK = FUSED.model_copy(
    update={
        "name": "fused_rerank",
        "description": "fused + reranker (cross-encoder if loaded, else the context reranker).",
        "rerank": True,
    }
)
FULL = FUSED_RERANK.model_copy(
    update={
        "name": "full",
        "description": "fused_rerank + speakers named in the query, time expressions, "
        "session documents, the question prior, time order for event-order questions, late "
        "interaction (memories and sessions) and MMR selection with session novelty.",
        "selection": True,
        # Multi-query decomposition changed nothing on LoCoMo (same R@10 and MRR), so the
        # default leaves it off; a preset or request can still turn it on.
        "decompose": False,
        "time_expressions": True,
        "speakers": True,
        "event_order": True,
        "question_prior": True,
        "session_documents": True,
        "late_interaction": True,
    }
)
FULL_NO_LATE = FULL.model_copy(
    update={
        "name": "full_no_late",
        "description": "full without late interaction (memories and sessions).",
        "late_interaction": False,
    }
)

#: Every preset by name, in the order a benchmark reports them.
PRESETS: dict[str, RecallPreset] = {
    p.name: p for p in (DENSE, FULLTEXT, FUSED, FUSED_RERANK, FULL_NO_LATE, FULL)
}
DEFAULT_PRESET = FULL.name


def get_preset(name: str) -> RecallPreset:
    """The preset called ``name``; ``KeyError`` names the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown preset {name!r}; known: {sorted(PRESETS)}") from None

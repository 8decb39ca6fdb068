"""Every tunable of the recall (read) path, in one frozen pydantic model.

No recall module hard-codes a number: they take a :class:`RecallConfig` (or values read
from it) as arguments, and their defaults are read from :data:`DEFAULT_RECALL_CONFIG`.
The values below are priors taken from the design sources (k = 60 for RRF, λ = 0.5 for
MMR, a 0.55 reranker blend, full-text weight ≈ 0.5 and heat weight ≈ 0.3 for the
balanced profile); they are meant to be recalibrated on a benchmark, which is why every
one of them is a plain, validated field.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipelines.recall.intent import Intent

Weight = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
UnitFloat = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
PositiveFloat = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]
PositiveInt = Annotated[int, Field(gt=0)]

#: Retrieval signals fused by weighted RRF.
SIGNAL_VECTOR = "vector"
SIGNAL_FULLTEXT = "fulltext"
SIGNAL_ENTITY = "entity"
SIGNAL_HEAT = "heat"
SIGNAL_RECENCY = "recency"
DEFAULT_SIGNALS: tuple[str, ...] = (
    SIGNAL_VECTOR,
    SIGNAL_FULLTEXT,
    SIGNAL_ENTITY,
    SIGNAL_HEAT,
    SIGNAL_RECENCY,
)


def _profile(
    vector: float, fulltext: float, entity: float, heat: float, recency: float
) -> dict[str, float]:
    return {
        SIGNAL_VECTOR: vector,
        SIGNAL_FULLTEXT: fulltext,
        SIGNAL_ENTITY: entity,
        SIGNAL_HEAT: heat,
        SIGNAL_RECENCY: recency,
    }


def _default_intent_weights() -> dict[Intent, dict[str, float]]:
    # Vector similarity and full-text anchor every profile; the other signals are shifted
    # per intent: recency up for knowledge-update questions only ("when did" questions ask
    # for a time, not for the latest memory), the entity graph up for entity, multi-hop and
    # ordering questions, heat up for standing instructions. Tuned on LoCoMo conversations
    # 1-2 and checked on 3-4 (preset full, rrf_k 20): doubling the full-text weights moved
    # turn MRR from 0.469 to 0.499 on 3-4; temporal recency 0.6 -> 0.1 added 0.05 R@10.
    return {
        Intent.SEMANTIC: _profile(1.0, 1.0, 0.3, 0.3, 0.1),
        Intent.TEMPORAL: _profile(1.0, 1.2, 0.4, 0.2, 0.1),
        Intent.CAUSAL: _profile(1.0, 0.8, 0.4, 0.2, 0.1),
        Intent.ENTITY: _profile(0.8, 1.2, 1.0, 0.2, 0.1),
        Intent.KNOWLEDGE_UPDATE: _profile(1.0, 1.0, 0.5, 0.5, 1.0),
        Intent.MULTI_HOP: _profile(1.0, 1.0, 0.8, 0.2, 0.1),
        Intent.PREFERENCE: _profile(1.0, 0.6, 0.6, 0.4, 0.3),
        Intent.INSTRUCTION: _profile(1.0, 1.2, 0.2, 0.6, 0.3),
        Intent.EVENT_ORDER: _profile(1.0, 1.0, 0.6, 0.1, 0.2),
        Intent.SUMMARIZATION: _profile(1.0, 0.6, 0.5, 0.4, 0.3),
    }


def _default_candidates() -> dict[str, int]:
    return {
        SIGNAL_VECTOR: 100,
        SIGNAL_FULLTEXT: 100,
        SIGNAL_ENTITY: 50,
        SIGNAL_HEAT: 50,
        SIGNAL_RECENCY: 50,
    }


class AbstentionThresholds(BaseModel):
    """Thresholds of :func:`pipelines.recall.abstain.decide_abstention`.

    Similarities are raw cosine values (−1..1). The evidence score is a weighted mean of
    four features in [0, 1]; the weights need not sum to one (they are renormalised over
    the features that are available for a query).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_candidates: Annotated[int, Field(ge=0)] = 1
    min_vector_similarity: Annotated[float, Field(ge=-1.0, le=1.0)] = 0.20
    strong_vector_similarity: Annotated[float, Field(ge=-1.0, le=1.0)] = 0.60
    min_keyword_coverage: UnitFloat = 0.34
    fulltext_half_saturation: PositiveFloat = 2.0
    weight_vector: Weight = 0.50
    weight_keywords: Weight = 0.25
    weight_fulltext: Weight = 0.15
    weight_agreement: Weight = 0.10
    min_evidence: UnitFloat = 0.30
    agreement_top_n: PositiveInt = 5
    #: Abstain when less than this share of the ``speaker_top_n`` best content matches was
    #: said by the speaker(s) the query names (0 disables the rule).
    min_speaker_match: UnitFloat = 0.0
    speaker_top_n: PositiveInt = 3

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.strong_vector_similarity <= self.min_vector_similarity:
            raise ValueError("strong_vector_similarity must exceed min_vector_similarity")
        total = self.weight_vector + self.weight_keywords + self.weight_fulltext
        if total + self.weight_agreement <= 0.0:
            raise ValueError("at least one evidence weight must be positive")
        return self


class RecallConfig(BaseModel):
    """All tunables of recall. Frozen: derive variants with ``model_copy(update=...)``.

    Nested dicts are plain dicts (pydantic cannot freeze them); treat them as read-only
    and use :meth:`weights_for` to obtain a private copy of a profile.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # --- fusion
    #: Small k sharpens the head: candidate lists are short (≤ 100 per signal), and on
    #: LoCoMo 20 beat the customary 60 (turn R@10 0.808 vs 0.788, conversations 1-2).
    rrf_k: Annotated[int, Field(ge=0)] = 20
    signals: tuple[str, ...] = DEFAULT_SIGNALS
    intent_weights: dict[Intent, dict[str, Weight]] = Field(default_factory=_default_intent_weights)
    temporal_boost_factor: Annotated[float, Field(ge=1.0, allow_inf_nan=False)] = 1.3

    # --- candidate generation
    candidates_per_signal: dict[str, PositiveInt] = Field(default_factory=_default_candidates)
    vector_overfetch_factor: Annotated[float, Field(ge=1.0, allow_inf_nan=False)] = 2.0
    vector_overfetch_max: PositiveInt = 2_000
    min_filter_selectivity: Annotated[float, Field(gt=0.0, le=1.0)] = 0.01
    # Exact scans cost linear time: at 10,000 memories the exact path measured p50 222 ms
    # against 151 ms for the approximate index at 100,000 (BENCHMARKS.md), so the crossover
    # is well below 10,000. 8,000 keeps LoCoMo's scale space (5,882) exact.
    exact_scan_threshold: Annotated[int, Field(ge=0)] = 8_000
    similarity_floor: Annotated[float, Field(ge=-1.0, le=1.0)] = 0.10

    # --- selection
    mmr_lambda: UnitFloat = 0.5
    mmr_oversample: Annotated[int, Field(ge=1)] = 3
    #: Selection considers at least this many candidates (``k × mmr_oversample`` when that
    #: is more; a request's ``oversample`` overrides both). With session novelty a small
    #: ``k`` needs room to reach other sessions: at k = 10 on LoCoMo, a pool of 50 instead
    #: of 30 raised session R@10 from 0.969 to 0.975 (novelty 0.3; BENCHMARKS.md, session 16).
    mmr_min_pool: PositiveInt = 50
    #: Session novelty in MMR selection (presets with ``session_documents``): a candidate
    #: whose conversation session already has a pick loses this much relevance (relevance
    #: is normalised to [0, 1]), once. 0 turns it off. LoCoMo per conversation, in-process
    #: with the session-level late interaction at 0.3 (BENCHMARKS.md, session 16), turn R@10
    #: / turn MRR / session R@10 / session MRR by novelty: 0 0.872 / 0.601 / 0.953 / 0.841,
    #: 0.1 0.870 / 0.601 / 0.960 / 0.848, 0.2 0.864 / 0.597 / 0.966 / 0.852, 0.3 0.854 /
    #: 0.590 / 0.969 / 0.855, 0.4 0.834 / 0.580 / 0.973 / 0.857 (pool 30); with the pool of
    #: 50, 0.2 0.860 / 0.595 / 0.968 / 0.854, 0.25 0.857 / 0.590 / 0.972 / 0.857.
    session_novelty: UnitFloat = 0.25

    # --- reranking
    rerank_weight: UnitFloat = 0.55
    rerank_window: PositiveInt = 50

    # --- session documents (presets with ``session_documents``), after reranking
    #: ``score_n + weight · (rrf_k + 1) / (rrf_k + 1 + rank)``: ``rank`` is the rank of the
    #: candidate's session by BM25 over whole-session documents (the full-text query run on
    #: the ``session_text`` index, :mod:`pipelines.session_documents`). On LoCoMo the session
    #: ranking by itself has session MRR 0.784, the turns of preset full 0.771 (ad-hoc).
    #: Preset full without session support, by weight (0 / 0.2 / 0.3 / 0.4), bench database:
    #: turn R@10 0.830 / 0.838 / 0.847 / 0.845, turn MRR 0.513 / 0.535 / 0.541 / 0.539,
    #: session R@10 0.951 / 0.956 / 0.954 / 0.951, session MRR 0.770 / 0.800 / 0.802 / 0.796
    #: (weight 0: the former session support alone, weight 0.15, which this replaces: it
    #: lifted a turn whose session had other strong candidates in the head; with both,
    #: 0.847 / 0.540 / 0.946 / 0.798; BENCHMARKS.md, session 12).
    session_document_weight: Weight = 0.3
    session_document_rrf_k: Annotated[int, Field(ge=0)] = 0
    #: How many sessions the session-level search returns (lower ranks get no lift).
    session_document_k: PositiveInt = 20

    # --- abstention
    abstention: AbstentionThresholds = Field(default_factory=AbstentionThresholds)

    # --- query handling
    max_query_chars: PositiveInt = 2_000
    min_k: PositiveInt = 1
    max_k: PositiveInt = 100
    default_k: PositiveInt = 10
    max_subqueries: PositiveInt = 4
    fulltext_max_terms: PositiveInt = 32
    fulltext_phrase_boost: Annotated[float, Field(ge=0.001, le=1000.0)] = 2.0
    recent_window_days: PositiveFloat = 30.0

    # --- heat and recency
    recency_half_life_days: PositiveFloat = 30.0
    heat_decay_rate_per_day: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 0.1
    heat_floor: UnitFloat = 0.0
    heat_access_boost: UnitFloat = 0.2
    #: A context signal (heat, recency) whose values spread less than this over the candidate
    #: pool carries no information for the query and is left out of the fusion (e.g. heat right
    #: after a bulk import, when every memory is equally hot).
    min_signal_spread: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 1e-3
    #: Whether heat and recency also bring candidates of their own (the space's hottest / most
    #: recent memories, whatever the query). Off: they only re-rank what the content signals
    #: (vector, full-text, entities) found.
    context_signals_add_candidates: bool = False

    # --- service (I/O side)
    #: Send the signals that need no query embedding (full-text, entities, heat, recency) to
    #: Neo4j on a second connection while the query is being embedded, and the vector signals
    #: after it: two concurrent round trips instead of one after the embedding. The results
    #: are the same either way (candidates are merged by id; rankings break ties by id).
    concurrent_signals: bool = True
    #: Full-text hits are post-filtered to the space like vector hits: over-fetch likewise.
    fulltext_overfetch_max: PositiveInt = 5_000
    #: Weight of each extra sub-query's vector ranking, relative to the vector weight.
    subquery_weight: UnitFloat = 0.5
    #: Time windows the query names ("in May 2023") also bring candidates of their own: a
    #: vector ranking inside each window, weighted like this relative to the vector signal.
    time_window_weight: Weight = 1.0
    max_time_windows: PositiveInt = 3
    #: Whether vague windows ("recently") bring candidates too (they always get the boost).
    soft_windows_add_candidates: bool = False
    #: Query n-grams (up to this many words) looked up as entity keys.
    entity_ngram_max: PositiveInt = 3
    entity_max_keys: PositiveInt = 64
    #: Memories whose speaker the query names get their fused score multiplied by this.
    speaker_boost_factor: Annotated[float, Field(ge=1.0, allow_inf_nan=False)] = 1.6
    #: Presets with ``question_prior``: the fused score of a conversation turn that ends with
    #: a question (:func:`pipelines.recall.query.ends_with_question`) is multiplied by this.
    #: 1 keeps the order. On LoCoMo 22 % of the turns end with a question but 10.5 % of the
    #: evidence turns do, and a question was the top result of 476 of 1,982 questions (49 of
    #: them evidence). Turn MRR by factor (1 / 0.85 / 0.7 / 0.55 / 0.4): 0.492 / 0.505 /
    #: 0.513 / 0.516 / 0.513, session MRR 0.767 / 0.774 / 0.770 / 0.762 / 0.758
    #: (BENCHMARKS.md, session 11); 0.7 improves all four recall figures.
    question_turn_factor: Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)] = 0.7
    #: Memories whose conversation session has a turn by a speaker the query names get their
    #: fused score multiplied by this (after the speaker boost): in a space shared by many
    #: conversations, a question about Caroline is about the conversations she took part in.
    speaker_session_boost_factor: Annotated[float, Field(ge=1.0, allow_inf_nan=False)] = 3.0
    #: Remove the speakers a query names from the text that is embedded for the vector
    #: signal too (they are always removed from the full-text query: memory text does not
    #: contain its speaker). On: the speaker boost already favours the named speaker's
    #: turns, and with the name left in, the query matches any turn of that speaker
    #: (memories are embedded as "speaker: text"); LoCoMo conversations 1-2, preset full:
    #: turn R@10 0.788 stripped vs 0.649 kept.
    strip_speakers_for_vector: bool = True
    #: How long a space's size and speaker list, and a stage filter's size, are cached by a
    #: Recaller (seconds).
    space_profile_ttl_s: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 30.0
    #: At most this many distinct speakers are read for query speaker detection.
    max_known_speakers: PositiveInt = 200
    #: No-weights reranker used when no cross-encoder is loaded: ``"context"`` scores a turn
    #: together with its conversation neighbours (NEXT edges); ``"none"`` disables it.
    fallback_reranker: Literal["context", "none"] = "context"
    #: Context reranker: a turn's score is ``cos(q, t) + context_weight · max(cos(q, n))``
    #: over its neighbours ``n`` up to ``context_window`` turns away.
    context_window: PositiveInt = 1
    context_weight: UnitFloat = 1.0
    context_rerank_weight: UnitFloat = 0.3
    #: Late interaction (presets with ``late_interaction``), after the session documents:
    #: the first ``late_interaction_window`` candidates are rescored
    #: ``(1 − w)·score_n + w·late_n`` (both min-max normalised over them), where ``late`` is
    #: MaxSim of the query's token vectors against each memory's stored ones, less
    #: ``late_interaction_length_penalty · ln(memory tokens)``
    #: (:mod:`pipelines.models.late_interaction`). Chosen on LoCoMo in session 15 (in-process,
    #: one database per setting; BENCHMARKS.md): per conversation, session MRR rises with the
    #: weight up to 0.6 (0.812 without the step; 0.829 at 0.3, 0.845 at 0.6), but raw MaxSim
    #: favours long turns (top 10 10 % longer at 0.6: the flat 1K context lost 11 questions)
    #: and at scale (all conversations in one space) high weights cost turn R@10 (0.812
    #: without, 0.782 at 0.6, 0.777 at 0.6 with the penalty, 0.802 at 0.4 with it). The
    #: penalty 0.05 makes the chosen turns as long as without the step; 0.4 is the weight that
    #: raises both MRRs in both settings at the smallest cost in turn R@10.
    late_interaction_window: PositiveInt = 50
    late_interaction_weight: UnitFloat = 0.4
    late_interaction_length_penalty: Annotated[float, Field(ge=0.0, le=1.0)] = 0.05
    #: Session-level late interaction (presets with ``late_interaction`` and
    #: ``session_documents``), after the memory-level step: the conversation sessions of the
    #: first ``session_late_interaction_window`` candidates are ranked by MaxSim of the
    #: query's token vectors against the token vectors of *all* their memories, less
    #: ``session_late_interaction_length_penalty · ln(session tokens)``, and the candidates
    #: are lifted by that rank like the session documents lift them
    #: (:func:`~pipelines.recall.fusion.session_rank_boost`). A question's words are often
    #: spread over several turns of one session; BM25 over the session document sees them
    #: only as exact words. By itself (no novelty), per conversation: turn R@10 0.854 →
    #: 0.872, turn MRR 0.591 → 0.601, session MRR 0.835 → 0.841, session R@10 0.960 → 0.953
    #: (the top 10 gathers in fewer sessions, which session novelty answers). Window 20
    #: scores as well as 50 (session MRR 0.857 / 0.855 with novelty 0.3) and reads fewer
    #: sessions.
    session_late_interaction_window: PositiveInt = 20
    session_late_interaction_weight: Weight = 0.3
    session_late_interaction_length_penalty: Annotated[float, Field(ge=0.0, le=1.0)] = 0.02

    @model_validator(mode="after")
    def _check(self) -> Self:
        if len(set(self.signals)) != len(self.signals) or not self.signals:
            raise ValueError("signals must be non-empty and unique")
        known = set(self.signals)
        missing = [intent for intent in Intent if intent not in self.intent_weights]
        if missing:
            raise ValueError(f"intent_weights lacks a profile for {missing}")
        for intent, profile in self.intent_weights.items():
            if set(profile) != known:
                raise ValueError(
                    f"profile {intent!s} must weight exactly {sorted(known)}, got {sorted(profile)}"
                )
            if not any(weight > 0.0 for weight in profile.values()):
                raise ValueError(f"profile {intent!s} has no positive weight")
        if set(self.candidates_per_signal) != known:
            raise ValueError("candidates_per_signal must cover exactly the signals")
        if not self.min_k <= self.default_k <= self.max_k:
            raise ValueError("need min_k <= default_k <= max_k")
        return self

    def weights_for(self, intent: Intent) -> dict[str, float]:
        """A fresh copy of the signal-weight profile of ``intent``."""
        return dict(self.intent_weights[intent])

    def clamp_k(self, k: int | None) -> int:
        """``k`` clamped into ``[min_k, max_k]``; ``None`` means ``default_k``."""
        if k is None:
            return self.default_k
        return max(self.min_k, min(self.max_k, k))

    def use_exact_scan(self, space_size: int) -> bool:
        """Whether a memory space is small enough to brute-force the vector signal.

        Below the threshold an exact cosine scan is cheap and has perfect recall, so the
        approximate index (and its over-fetch) is not worth it.
        """
        return space_size <= self.exact_scan_threshold

    def vector_fetch_size(
        self,
        needed: int,
        *,
        space_size: int,
        filter_selectivity: float = 1.0,
        attempt: int = 0,
    ) -> int:
        """How many neighbours to ask the approximate vector index for.

        An approximate index searched globally and post-filtered (by memory space, time
        window, ...) returns about ``fetch × selectivity`` usable rows, so the request is
        ``ceil(needed × factor^(attempt+1) / selectivity)``, capped at
        ``vector_overfetch_max``; ``attempt`` lets the caller escalate when a previous try
        came back short. Exact scans (small spaces) need no over-fetch. Selectivity is
        clamped to ``[min_filter_selectivity, 1]``.
        """
        if needed <= 0:
            return 0
        if attempt < 0:
            raise ValueError("attempt must be >= 0")
        if self.use_exact_scan(space_size):
            return needed
        selectivity = min(1.0, max(self.min_filter_selectivity, filter_selectivity))
        wanted = needed * self.vector_overfetch_factor ** (attempt + 1) / selectivity
        return max(needed, min(self.vector_overfetch_max, math.ceil(wanted)))


DEFAULT_RECALL_CONFIG = RecallConfig()

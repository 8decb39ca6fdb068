"""The sections of :class:`~pipelines.recall.config.RecallConfig`: one model per step (and
the value types and signal names they share)."""

from __future__ import annotations

import math
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

Weight = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
UnitFloat = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
PositiveFloat = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]
PositiveInt = Annotated[int, Field(gt=0)]
NonNegativeInt = Annotated[int, Field(ge=0)]
Factor = Annotated[float, Field(ge=1.0, allow_inf_nan=False)]

#: Retrieval signals fused by weighted RRF.
SIGNAL_VECTOR = "vector"
SIGNAL_FULLTEXT = "fulltext"
SIGNAL_ENTITY = "entity"
SIGNAL_HEAT = "heat"
SIGNAL_RECENCY = "recency"
#: The turns that stated the standing instructions and preferences closest to a task-like
#: query (step ``standing``): weighted by ``fusion.standing_weight``, not by intent.
SIGNAL_STANDING = "standing"
DEFAULT_SIGNALS: tuple[str, ...] = (
    SIGNAL_VECTOR,
    SIGNAL_FULLTEXT,
    SIGNAL_ENTITY,
    SIGNAL_HEAT,
    SIGNAL_RECENCY,
)


def _default_candidates() -> dict[str, int]:
    return {
        SIGNAL_VECTOR: 100,
        SIGNAL_FULLTEXT: 100,
        SIGNAL_ENTITY: 50,
        SIGNAL_HEAT: 50,
        SIGNAL_RECENCY: 50,
    }


#: The bounds of a full-text phrase boost (Lucene's ``^boost``, written in fixed point).
MIN_PHRASE_BOOST = 0.001
MAX_PHRASE_BOOST = 1000.0


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class QueryConfig(_Section):
    """The ``understand`` step: what is derived from the query text."""

    #: The signals fused (the others get weight 0): some of :attr:`RecallConfig.signals`.
    signals: tuple[str, ...] = DEFAULT_SIGNALS
    #: Use the intent's weight profile; off: the semantic (balanced) profile always.
    intent_profiles: bool = True
    #: Resolve time expressions ("last March") against the question time: boosts and
    #: candidate windows.
    time_expressions: bool = True
    #: Speakers named in the query: search the content without the names and boost the
    #: memories those speakers said (and their conversations).
    speakers: bool = True
    fulltext_max_terms: PositiveInt = 32
    fulltext_phrase_boost: Annotated[float, Field(ge=MIN_PHRASE_BOOST, le=MAX_PHRASE_BOOST)] = 2.0
    #: What "recently" means, in days.
    recent_window_days: PositiveFloat = 30.0
    #: Query n-grams (up to this many words) looked up as entity keys.
    entity_ngram_max: PositiveInt = 3
    entity_max_keys: PositiveInt = 64
    #: A query word that is not a stop word, has no digit and no capital is a keyword (for
    #: the abstention's keyword coverage) from this many characters.
    keyword_min_chars: PositiveInt = 4
    #: Identifier-like tokens of a query looked up exactly (step ``identifiers``), at most.
    max_identifiers: PositiveInt = 8
    #: Remove the speakers a query names from the text that is embedded for the vector
    #: signal too (they are always removed from the full-text query: memory text does not
    #: contain its speaker). On: the speaker boost already favours the named speaker's
    #: turns, and with the name left in, the query matches any turn of that speaker
    #: (memories are embedded as "speaker: text"); LoCoMo conversations 1-2, preset full:
    #: turn R@10 0.788 stripped vs 0.649 kept.
    strip_speakers_for_vector: bool = True
    #: Search without the words that ask for a summary, a list or an order rather than about
    #: a topic ("Can you give me a summary of …", "… throughout our conversations"):
    #: :func:`pipelines.recall.query.strip_meta`.
    strip_meta: bool = True


class CandidatesConfig(_Section):
    """The ``candidates`` step: how many candidates each signal brings, and how."""

    per_signal: dict[str, PositiveInt] = Field(default_factory=_default_candidates)
    vector_overfetch_factor: Annotated[float, Field(ge=1.0, allow_inf_nan=False)] = 2.0
    vector_overfetch_max: PositiveInt = 2_000
    min_filter_selectivity: Annotated[float, Field(gt=0.0, le=1.0)] = 0.01
    #: Exact scans cost linear time: at 10,000 memories the exact path measured p50 222 ms
    #: against 151 ms for the approximate index at 100,000, so the crossover is well below
    #: 10,000. 8,000 keeps LoCoMo's scale space (5,882 memories) exact.
    exact_scan_threshold: Annotated[int, Field(ge=0)] = 8_000
    #: Full-text hits are post-filtered to the space like vector hits: over-fetch likewise.
    fulltext_overfetch_max: PositiveInt = 5_000
    max_time_windows: PositiveInt = 3
    #: Whether vague windows ("recently") bring candidates too (they always get the boost).
    soft_windows_add_candidates: bool = False
    #: Whether heat and recency also bring candidates of their own (the space's hottest / most
    #: recent memories, whatever the query). Off: they only re-rank what the content signals
    #: (vector, full-text, entities) found.
    context_signals_add_candidates: bool = False
    #: Send the signals that need no query embedding (full-text, entities, heat, recency) to
    #: Neo4j on a second connection while the query is being embedded, and the vector signals
    #: after it (needs the Recaller's executor). The results are the same either way
    #: (candidates are merged by id; rankings break ties by id).
    concurrent_signals: bool = True
    #: Step ``standing``: at most this many turns that stated a standing instruction or
    #: preference, those whose statement's (or topic's) cosine with the query reaches the
    #: minimum. In-process on kept spaces, preset full, turn R@10 / MRR by minimum (0.2 /
    #: 0.3 / 0.4 / 0.5): BEAM 0.823 / 0.634, 0.820 / 0.634, 0.831 / 0.637, 0.828 / 0.628;
    #: LoCoMo 0.2 cost session R@10 (0.970 -> 0.969), 0.3 and 0.4 change nothing there.
    standing_k: Annotated[int, Field(ge=0)] = 3
    standing_min_similarity: Annotated[float, Field(ge=-1.0, le=1.0)] = 0.4
    #: Which queries the step serves: task-like ones only ("how should I …", "can you show
    #: me …"), or every query (an instruction conditioned on a topic, "format dates as … when
    #: I ask about deadlines", governs plain questions too).
    standing_scope: Literal["task", "all"] = "all"
    #: A long memory's chunks each signal keeps (best first): its score is its best chunk's,
    #: the rest are named in ``explain`` and shown by ``/context``.
    chunks_per_memory: PositiveInt = 3
    #: A long memory's best chunk vector score less this times ln(its chunks) (normalised
    #: cosine units): more chunks, more chances to match by chance. BEAM-100K, preset dense,
    #: turn MRR 0.401 without (0.448 without chunk signals at all), 0.439 / 0.453 / 0.452 at
    #: 0.01 / 0.02 / 0.04; full unchanged; LoCoMo has no long memories.
    chunk_length_penalty: Annotated[float, Field(ge=0.0, le=1.0)] = 0.02
    #: Memories read per query identifier (step ``identifiers``): an identifier shared by
    #: more is no lookup key.
    identifier_fetch: PositiveInt = 50

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


class FusionConfig(_Section):
    """The ``fuse`` step: weighted RRF of the signal rankings, then multiplicative boosts."""

    #: Small k sharpens the head: candidate lists are short (≤ 100 per signal), and on
    #: LoCoMo 20 beat the customary 60 (turn R@10 0.808 vs 0.788, conversations 1-2).
    rrf_k: Annotated[int, Field(ge=0)] = 20
    #: Time windows the query names ("in May 2023") also bring candidates of their own: a
    #: vector ranking inside each window, weighted like this relative to the vector signal.
    time_window_weight: Weight = 1.0
    #: Memories inside a time window the query names.
    temporal_boost_factor: Factor = 1.3
    #: Memories whose speaker the query names.
    speaker_boost_factor: Factor = 1.6
    #: Memories whose conversation session has a turn by a speaker the query names (after
    #: the speaker boost): in a space shared by many conversations, a question about
    #: Caroline is about the conversations she took part in.
    speaker_session_boost_factor: Factor = 3.0
    #: The question prior: a conversation turn that ends with a question
    #: (:func:`pipelines.recall.query.ends_with_question`) is scaled by this; 1 keeps the
    #: order (no prior). On LoCoMo 22 % of the turns end with a question but 10.5 % of the
    #: evidence turns do, and a question was the top result of 476 of 1,982 questions (49 of
    #: them evidence). Turn MRR by factor (1 / 0.85 / 0.7 / 0.55 / 0.4): 0.492 / 0.505 /
    #: 0.513 / 0.516 / 0.513, session MRR 0.767 / 0.774 / 0.770 / 0.762 / 0.758; 0.7
    #: improves all four recall figures.
    question_turn_factor: Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)] = 0.7
    #: A query in the first person ("what did I decide ...") asks about its asker, the user:
    #: the user's own turns hold what they said and did, and the other party's replies
    #: restate it. Turns of role ``user`` are scaled by this when the candidates hold turns
    #: of other roles too (1 keeps the order; a space of one role is left alone). Summaries
    #: (both parties) and questions about what the other party said are left alone. BEAM-100K
    #: in-process, turn MRR by factor (1 / 1.5 / 2 / 3 / 4): 0.470 / 0.543 / 0.569 / 0.583 /
    #: 0.589; LoCoMo asks about named people, not in the first person: unchanged.
    first_person_user_factor: Factor = 3.0
    #: Weight of the ``standing`` ranking (step ``standing``) in the fusion, for every intent.
    standing_weight: Weight = 1.0
    #: A context signal (heat, recency) whose values spread less than this over the candidate
    #: pool carries no information for the query and is left out of the fusion (e.g. heat right
    #: after a bulk import, when every memory is equally hot).
    min_signal_spread: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 1e-3
    #: Per-query signal reliability (:func:`pipelines.recall.steps.fuse.signal_reliability`):
    #: each content signal's weight is scaled by how far its best score stands above the
    #: rest of its top ``reliability_top_n`` relative to the other content signals; 0 turns
    #: it off.
    reliability_top_n: Annotated[int, Field(ge=0)] = 0
    #: Scale the session-level lifts (session documents, session late interaction) by how
    #: finely the selection pool splits into sessions against k
    #: (:func:`pipelines.recall.steps.session_documents.session_resolution`): few large
    #: sessions, less lift.
    #: With ``selection.novelty_by_resolution``, in-process on kept spaces: BEAM-100K (3
    #: conversations, 54 questions) turn R@10 / MRR 0.870 / 0.521 -> 0.889 / 0.549; LoCoMo
    #: (6 conversations, 1,155) 0.847 / 0.576 -> 0.853 / 0.581, session 0.970 / 0.857 kept.
    session_lift_by_resolution: bool = True
    #: The results that resolution is judged against (the head judged is
    #: ``selection.min_pool`` candidates): fixed, so the order does not depend on a request's k.
    session_resolution_k: PositiveInt = 10
    recency_half_life_days: PositiveFloat = 30.0


class HeatConfig(_Section):
    """Heat of a memory: read by ``fuse`` (decayed to the question time), written by
    ``touch``, decayed by the consolidation job."""

    decay_rate_per_day: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 0.1
    floor: UnitFloat = 0.0
    access_boost: UnitFloat = 0.2


class RerankConfig(_Section):
    """The ``rerank`` step: the cross-encoder when loaded, else the no-weights fallback."""

    #: Blend of the cross-encoder score into the fused one.
    weight: UnitFloat = 0.55
    window: PositiveInt = 50
    #: ``"context"`` scores a turn together with its conversation neighbours (NEXT edges);
    #: ``"none"`` reranks nothing without a cross-encoder.
    fallback: Literal["context", "none"] = "context"
    #: Context reranker: a turn's score is ``cos(q, t) + context_weight · max(cos(q, n))``
    #: over its neighbours ``n`` up to ``context_window`` turns away, blended by
    #: ``context_blend``.
    context_window: PositiveInt = 1
    context_weight: UnitFloat = 1.0
    context_blend: UnitFloat = 0.3
    #: A long memory whose vector score came from its chunks is scored by that best chunk (as
    #: the candidates step scored it) rather than by its mean vector, whichever is higher: the
    #: mean of many chunks matches no query well. BEAM-100K in process, preset full: turn
    #: R@10 / MRR 0.839 / 0.638 -> 0.842 / 0.640; LoCoMo has no long memories.
    context_best_chunk: bool = True


class SessionDocumentsConfig(_Section):
    """The ``session_documents`` step: ``score_n + weight · (rrf_k + 1) / (rrf_k + 1 +
    rank)``, ``rank`` being the rank of the candidate's session by BM25 over whole-session
    documents (:mod:`pipelines.session_documents`).

    On LoCoMo the session ranking by itself has session MRR 0.784, the turns of preset full
    0.771. Preset full without it, by weight (0 / 0.2 / 0.3 / 0.4): turn R@10 0.830 / 0.838 /
    0.847 / 0.845, turn MRR 0.513 / 0.535 / 0.541 / 0.539, session MRR 0.770 / 0.800 /
    0.802 / 0.796."""

    weight: Weight = 0.3
    rrf_k: Annotated[int, Field(ge=0)] = 0
    #: How many sessions the session-level search returns (lower ranks get no lift).
    k: PositiveInt = 20


class LateInteractionConfig(_Section):
    """The ``late_interaction`` step: the first ``window`` candidates are rescored
    ``(1 − w)·score_n + w·late_n`` (both min-max normalised over them), ``late`` being MaxSim
    of the query's token vectors against the memory's stored ones, less ``length_penalty ·
    ln(memory tokens)`` (:mod:`pipelines.models.late_interaction`).

    Chosen on LoCoMo (one database per setting): per conversation, session MRR rises with
    the weight up to 0.6 (0.812 without the step, 0.829 at 0.3, 0.845 at 0.6), but raw
    MaxSim favours long turns and at scale (all conversations in one space) high weights
    cost turn R@10 (0.812 without, 0.782 at 0.6, 0.802 at 0.4 with the penalty). The penalty
    0.05 keeps the chosen turns as long as without the step; 0.4 raises both MRRs in both
    settings at the smallest cost in turn R@10."""

    window: PositiveInt = 50
    weight: UnitFloat = 0.4
    length_penalty: Annotated[float, Field(ge=0.0, le=1.0)] = 0.05


class SessionLateInteractionConfig(_Section):
    """The ``session_late_interaction`` step: the conversation sessions of the first
    ``window`` candidates are ranked by MaxSim of the query's token vectors against the
    token vectors of *all* their memories, less ``length_penalty · ln(session tokens)``,
    and candidates are lifted by that rank as the session documents lift them.

    A question's words are often spread over several turns of one session, which BM25 over
    the session document sees only as exact words. By itself (no novelty), per
    conversation: turn R@10 0.854 → 0.872, turn MRR 0.591 → 0.601, session MRR 0.835 →
    0.841, session R@10 0.960 → 0.953 (the top 10 gathers in fewer sessions, which session
    novelty answers). A window of 20 scores as well as 50 and reads fewer sessions."""

    window: PositiveInt = 20
    weight: Weight = 0.3
    length_penalty: Annotated[float, Field(ge=0.0, le=1.0)] = 0.02


class SelectionConfig(_Section):
    """The ``select`` step: greedy MMR over the oversampled head of the ranking."""

    mmr_lambda: UnitFloat = 0.5
    oversample: Annotated[int, Field(ge=1)] = 3
    #: Selection considers at least this many candidates (``k × oversample`` when that is
    #: more; a request's ``oversample`` overrides both). With session novelty a small ``k``
    #: needs room to reach other sessions: at k = 10 on LoCoMo, a pool of 50 instead of 30
    #: raised session R@10 from 0.969 to 0.975 (novelty 0.3).
    min_pool: PositiveInt = 50
    #: Session novelty (for requests across sessions, unless the request gives its own): a
    #: candidate whose conversation session already has a pick loses this much relevance
    #: (normalised to [0, 1]), once; 0 turns it off. LoCoMo per conversation, turn R@10 /
    #: turn MRR / session R@10 / session MRR by novelty (pool 30): 0: 0.872 / 0.601 / 0.953
    #: / 0.841, 0.2: 0.864 / 0.597 / 0.966 / 0.852, 0.3: 0.854 / 0.590 / 0.969 / 0.855; with
    #: the pool of 50, 0.25: 0.857 / 0.590 / 0.972 / 0.857.
    session_novelty: UnitFloat = 0.25
    #: Scale session novelty likewise by the pool's session resolution (see
    #: ``fusion.session_lift_by_resolution``).
    novelty_by_resolution: bool = True
    #: Summary requests (step ``replies``): the reply to each of the first ``summary_replies
    #: × k`` results, the next turn said by someone else, comes right after it. A summary of
    #: what was covered needs what was answered as well as what was asked; 0 turns it off.
    #: BEAM-100K (31 summary requests) turn R@10 by share (0 / 0.2 / 0.3 / 0.5): 0.831 /
    #: 0.834 / 0.839 / 0.837; LoCoMo has no summary requests among its questions.
    summary_replies: UnitFloat = 0.3
    #: Step ``standing_slots``: the turns of the best standing statements step ``standing``
    #: found (at most this many, best first) always have a place among the results, the last
    #: ones: a task's governing instruction matches the task by topic, not by the words that
    #: late interaction and the context reranker score, which pushed it out of the top 10.
    #: The first result always stays (with k = 1 there is no room); 0 turns it off. BEAM-100K
    #: in process, preset full: turn R@10 0.842 -> 0.848 (instruction following 0.775 ->
    #: 0.825), MRR unchanged; 2 / 3 slots: 0.845 / 0.839. LoCoMo: unchanged.
    standing_slots: NonNegativeInt = 1


class OrderConfig(_Section):
    """The ``order`` step: when the results are put in time order."""

    #: ``order="auto"`` puts event-order questions in time order.
    event_order: bool = True


class EchoesConfig(_Section):
    """The ``echoes`` step: a question turn that restates the query gives its place to the
    turn that answers it (:mod:`pipelines.recall.steps.echoes`)."""

    #: Echoes are looked for among this many of the ranking's first candidates; 0 turns the
    #: step off. LoCoMo conversations 1-3 in process (preset full, k = 10, 495 questions),
    #: off / on: MRR 0.6041 / 0.6145, R@10 0.8808 / 0.8828 (13 rankings changed);
    #: BEAM-100K conversation 1 (18 questions): 0.6426 / 0.6426, nothing changed.
    window: NonNegativeInt = 10
    #: An echo: at least this share of the content words its question sentences ask about
    #: are the query's ...
    min_question_share: UnitFloat = 0.6
    #: ... they cover at least this share of the query's content words ...
    min_query_share: UnitFloat = 0.5
    #: ... and its other sentences hold at most this many content words the query has not.
    max_other_words: NonNegativeInt = 3


class AbstentionThresholds(_Section):
    """The ``abstain`` step (:func:`pipelines.recall.steps.abstain.decide_abstention`).

    Similarities are raw cosine values (−1..1). The evidence score is a weighted mean of
    four features in [0, 1]; the weights need not sum to one (they are renormalised over
    the features that are available for a query).
    """

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
    #: Abstain when less than this share of the ``speaker_top_n`` best content matches from
    #: the named speakers' conversations was said by them (0 disables the rule): what the
    #: question asks about was said by someone else. The thresholds of this section were
    #: calibrated on LoCoMo's adversarial and BEAM-100K's abstention questions together, per
    #: conversation and LoCoMo in one shared space (751104c): precision /
    #: recall 0.50 / 0.30 per conversation (0.18 / 0.02 without this rule), 0.50 / 0.28 in
    #: the shared space; BEAM names no speakers and no recall feature separates its
    #: unanswerable questions (0.25 / 0.03).
    min_speaker_match: UnitFloat = 0.35
    speaker_top_n: PositiveInt = 10

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.strong_vector_similarity <= self.min_vector_similarity:
            raise ValueError("strong_vector_similarity must exceed min_vector_similarity")
        total = self.weight_vector + self.weight_keywords + self.weight_fulltext
        if total + self.weight_agreement <= 0.0:
            raise ValueError("at least one evidence weight must be positive")
        return self

"""Every tunable of the recall (read) path: one frozen pydantic model, one section per step.

A preset (:mod:`pipelines.recall.presets`) says *which* steps run and in what order, plus
the fields of this model it runs with (its overlay); this model says *how* each step is
tuned, the defaults being those of the ``full`` preset. No recall module hard-codes a tuning
number: a step reads its own section (``config.rerank``, ``config.late_interaction``, ...;
the sections are :mod:`pipelines.recall.config.sections`). What is left elsewhere is units,
the request's bounds (:mod:`pipelines.recall.request`, the API's contract) and the English
rule tables (the intent rules' vote strengths, the identifier and stemming rules). The
values are priors from the design sources (k = 60 for RRF, λ = 0.5 for MMR, a 0.55 reranker
blend) recalibrated on LoCoMo where a comment says so; every one is a plain, validated
field, so a benchmark can sweep it (``python -m benchmarks locomo --recall-set
section.field=value``).
"""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import Field, model_validator

from pipelines.recall.config.sections import (
    DEFAULT_SIGNALS,
    SIGNAL_ENTITY,
    SIGNAL_FULLTEXT,
    SIGNAL_HEAT,
    SIGNAL_RECENCY,
    SIGNAL_STANDING,
    SIGNAL_VECTOR,
    AbstentionThresholds,
    CandidatesConfig,
    EchoesConfig,
    FusionConfig,
    HeatConfig,
    LateInteractionConfig,
    NonNegativeInt,
    OrderConfig,
    PositiveInt,
    QueryConfig,
    RerankConfig,
    SelectionConfig,
    SessionDocumentsConfig,
    SessionLateInteractionConfig,
    UnitFloat,
    Weight,
    _Section,
)
from pipelines.recall.intent import Intent


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


class RecallConfig(_Section):
    """All tunables of recall. Frozen: derive variants with
    :func:`pipelines.overrides.merge_overrides` (validated) or ``model_copy``.

    Nested dicts are plain dicts (pydantic cannot freeze them); treat them as read-only
    and use :meth:`weights_for` to obtain a private copy of a profile.
    """

    # --- signals and their weight profiles (the understand step)
    signals: tuple[str, ...] = DEFAULT_SIGNALS
    intent_weights: dict[Intent, dict[str, Weight]] = Field(default_factory=_default_intent_weights)

    # --- one section per step
    query: QueryConfig = Field(default_factory=QueryConfig)
    candidates: CandidatesConfig = Field(default_factory=CandidatesConfig)
    fusion: FusionConfig = Field(default_factory=FusionConfig)
    heat: HeatConfig = Field(default_factory=HeatConfig)
    rerank: RerankConfig = Field(default_factory=RerankConfig)
    session_documents: SessionDocumentsConfig = Field(default_factory=SessionDocumentsConfig)
    late_interaction: LateInteractionConfig = Field(default_factory=LateInteractionConfig)
    session_late_interaction: SessionLateInteractionConfig = Field(
        default_factory=SessionLateInteractionConfig
    )
    selection: SelectionConfig = Field(default_factory=SelectionConfig)
    order: OrderConfig = Field(default_factory=OrderConfig)
    echoes: EchoesConfig = Field(default_factory=EchoesConfig)
    abstention: AbstentionThresholds = Field(default_factory=AbstentionThresholds)

    # --- the service
    #: How long a space's size and speaker list, and a stage filter's size, are cached by a
    #: Recaller (seconds).
    space_profile_ttl_s: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 30.0
    #: At most this many distinct speakers are read for query speaker detection.
    max_known_speakers: PositiveInt = 200
    #: Learn the names speakers call each other by (:mod:`pipelines.recall.speakers`) from at
    #: most this many of the newest turns that open by addressing someone; 0 learns none.
    max_speaker_openings: NonNegativeInt = 2000
    #: A speaker is also known by the first part of its name from this many characters
    #: (shorter parts are initials or noise).
    speaker_alias_min_chars: PositiveInt = 3
    #: A learned name counts when it addressed one speaker at least this many times and in
    #: at least this share of its uses.
    speaker_name_min_addresses: PositiveInt = 2
    speaker_name_min_share: UnitFloat = 0.75
    #: Threads :func:`~pipelines.recall.service.open_recaller` gives a Recaller's executor (a
    #: worker only waits for Neo4j).
    signal_threads: PositiveInt = 8
    #: Stage filters whose size a Recaller caches, and presets whose configuration it keeps
    #: merged, at most (the cache is emptied when full).
    max_cached_stage_scopes: PositiveInt = 4_096
    max_cached_presets: PositiveInt = 64

    @model_validator(mode="after")
    def _check(self) -> Self:
        if len(set(self.signals)) != len(self.signals) or not self.signals:
            raise ValueError("signals must be non-empty and unique")
        known = set(self.signals)
        fused = self.query.signals
        if not fused or len(set(fused)) != len(fused) or not set(fused) <= known:
            raise ValueError(
                f"query.signals must be unique and some of {list(self.signals)}, got {list(fused)}"
            )
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
        if set(self.candidates.per_signal) != known:
            raise ValueError("candidates.per_signal must cover exactly the signals")
        return self

    def weights_for(self, intent: Intent) -> dict[str, float]:
        """A fresh copy of the signal-weight profile of ``intent``."""
        return dict(self.intent_weights[intent])


DEFAULT_RECALL_CONFIG = RecallConfig()


__all__ = [
    "DEFAULT_RECALL_CONFIG",
    "DEFAULT_SIGNALS",
    "SIGNAL_ENTITY",
    "SIGNAL_FULLTEXT",
    "SIGNAL_HEAT",
    "SIGNAL_RECENCY",
    "SIGNAL_STANDING",
    "SIGNAL_VECTOR",
    "AbstentionThresholds",
    "CandidatesConfig",
    "EchoesConfig",
    "FusionConfig",
    "HeatConfig",
    "LateInteractionConfig",
    "OrderConfig",
    "QueryConfig",
    "RecallConfig",
    "RerankConfig",
    "SelectionConfig",
    "SessionDocumentsConfig",
    "SessionLateInteractionConfig",
]

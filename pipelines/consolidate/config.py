"""Every threshold and interval of the consolidation jobs, in one frozen pydantic tree.

No job module hard-codes a number: each takes its section of :class:`ConsolidationConfig`.
A space may override any section through its settings (``{"consolidation": {"merge":
{"similarity": 0.95}}}``); retention policies live under ``{"retention": {...}}``
(:class:`RetentionPolicy`). :func:`effective_config` applies those overrides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.config import JsonDict

from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG

__all__ = [
    "DEFAULT_CONSOLIDATION_CONFIG",
    "JOB_NAMES",
    "CommunityConfig",
    "ConsolidationConfig",
    "DecayConfig",
    "EntityMergeConfig",
    "MergeConfig",
    "RetentionConfig",
    "RetentionPolicy",
    "RunnerConfig",
    "SchedulerConfig",
    "SchemaConfig",
    "StageRule",
    "SupersedeConfig",
    "TokenVectorConfig",
    "UpkeepConfig",
    "effective_config",
    "parse_intervals",
]

#: The jobs, in the order a full pass runs them.
JOB_NAMES: tuple[str, ...] = (
    "merge",
    "supersede",
    "entity_merge",
    "decay",
    "communities",
    "schemas",
    "upkeep",
    "token_vectors",
    "fact_vectors",
    "retention",
)

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class StageRule(BaseModel):
    """One consolidation stage: how fast heat decays in it and the floor it keeps."""

    model_config = _FROZEN

    decay_multiplier: float = Field(ge=0.0)
    """Multiplies the base decay rate (2.0 = twice as fast)."""
    heat_floor: float = Field(ge=0.0, le=1.0)
    """Heat never decays below this (never *raises* a memory already below it)."""


class DecayConfig(BaseModel):
    """Heat decay with consolidation stages (labile -> early -> late -> consolidated).

    Advancement (see :func:`pipelines.consolidate.decay.consolidation_stage`):
    ``early`` after ``early_after_hours`` or with importance >= ``early_importance``;
    ``late`` after ``late_after_hours`` with a replay (access, restatement, merged duplicate)
    or importance >= ``late_importance``; ``consolidated`` after ``consolidated_after_hours``
    with ``consolidated_replays`` replays (``congruent_replays`` when the memory mentions a key
    entity of its stage's schema). Stages never regress.
    """

    model_config = _FROZEN

    base_rate_per_day: float = Field(
        default=DEFAULT_RECALL_CONFIG.heat.decay_rate_per_day, ge=0.0, allow_inf_nan=False
    )
    labile: StageRule = StageRule(decay_multiplier=2.0, heat_floor=0.0)
    early: StageRule = StageRule(decay_multiplier=1.2, heat_floor=0.0)
    late: StageRule = StageRule(decay_multiplier=0.8, heat_floor=0.05)
    consolidated: StageRule = StageRule(decay_multiplier=0.5, heat_floor=0.10)
    early_after_hours: float = Field(default=1.0, ge=0.0)
    late_after_hours: float = Field(default=6.0, ge=0.0)
    consolidated_after_hours: float = Field(default=24.0, ge=0.0)
    early_importance: float = Field(default=0.6, ge=0.0, le=1.0)
    late_importance: float = Field(default=0.7, ge=0.0, le=1.0)
    late_replays: int = Field(default=1, ge=0)
    consolidated_replays: int = Field(default=3, ge=0)
    congruent_replays: int = Field(default=1, ge=0)
    min_change: float = Field(default=0.02, ge=0.0, le=1.0)
    """A memory is rewritten only when its stage changes or its heat snapshot moves this much."""
    batch_size: int = Field(default=5_000, ge=1)

    def rule(self, stage: str) -> StageRule:
        return {
            "labile": self.labile,
            "early": self.early,
            "late": self.late,
            "consolidated": self.consolidated,
        }[stage]


class MergeConfig(BaseModel):
    """Near-duplicate memories collapsed into one canonical memory (undoable)."""

    model_config = _FROZEN

    similarity: float = Field(default=0.92, ge=0.0, le=1.0)
    """Cosine similarity (not Neo4j's (1+cos)/2 score) at or above which a pair is a candidate."""
    lexical: float = Field(default=0.6, ge=0.0, le=1.0)
    """Content-token Jaccard also required (plus equal numbers, names and negation)."""
    same_speaker: bool = True
    """Only merge memories of the same speaker, role and kind."""
    batch_size: int = Field(default=5_000, ge=1)
    """Embeddings read per round trip."""
    write_batch: int = Field(default=200, ge=1)
    """Merges written per transaction."""
    recheck_margin_seconds: float = Field(default=60.0, ge=0.0)
    """The incremental watermark is set this far before the run so late commits are rechecked."""


class EntityMergeConfig(BaseModel):
    """A person's short forms and misspellings merged into one entity, undoably
    (:mod:`pipelines.consolidate.entity_aliases` says when the evidence supports it)."""

    model_config = _FROZEN

    enabled: bool = True
    min_prefix: int = Field(default=3, ge=2)
    """Shortest short form taken as a prefix of a name ("Mel" of "Melanie")."""
    min_fuzzy: int = Field(default=4, ge=3)
    """Shortest alias compared within one edit ("Mell" of "Melanie")."""
    min_addressed: float = Field(default=0.5, ge=0.0, le=1.0)
    """Share of the alias's mentions said by others than the canonical speaker that counts as
    being addressed by it."""
    min_neighbour_jaccard: float = Field(default=0.2, ge=0.0, le=1.0)
    """Jaccard of the two entities' co-occurring neighbours that counts as support."""
    max_merges: int = Field(default=200, ge=1)
    """Merges per run (one transaction each)."""


class SupersedeConfig(BaseModel):
    """Automatic supersession: deterministic claim rules, conservative by design."""

    model_config = _FROZEN

    min_similarity: float = Field(default=0.2, ge=-1.0, le=1.0)
    """Cosine similarity of the two memories' embeddings also required (a sanity check)."""
    min_claim_coverage: float = Field(default=0.5, ge=0.0, le=1.0)
    """The whole older memory is superseded only when its claims cover this share of its
    content words; otherwise only its matching facts are (the memory says more)."""
    fact_level: bool = True
    """Supersede individual facts when the memory as a whole must stay."""
    page_size: int = Field(default=5_000, ge=1)


class CommunityConfig(BaseModel):
    """Topical stages from GDS Leiden over the memory-entity graph."""

    model_config = _FROZEN

    enabled: bool = True
    min_active_memories: int = Field(default=10, ge=1)
    """Spaces smaller than this keep their stages."""
    random_seed: int = 42
    concurrency: int = Field(default=1, ge=1, le=4)
    gamma: float = Field(default=1.0, gt=0.0)
    theta: float = Field(default=0.01, gt=0.0)
    tolerance: float = Field(default=1e-4, gt=0.0)
    max_levels: int = Field(default=10, ge=1)
    max_entity_share: float = Field(default=0.2, gt=0.0, le=1.0)
    """Entities mentioned by more than this share of the memories are left out (hubs such as
    the user's own name would glue every topic together) ..."""
    hub_min_memories: int = Field(default=50, ge=1)
    """... once the space has at least this many active memories."""
    min_stage_memories: int = Field(default=3, ge=1)
    """Smaller communities join the stage of the unit just before them in time."""
    stable_jaccard: float = Field(default=0.5, ge=0.0, le=1.0)
    """A community keeps an existing stage id when their memberships overlap this much."""
    name_entities: int = Field(default=3, ge=0)
    write_batch: int = Field(default=500, ge=1)


class SchemaConfig(BaseModel):
    """Deterministic schema-structured stage summaries."""

    model_config = _FROZEN

    max_entities: int = Field(default=8, ge=0)
    max_decisions: int = Field(default=5, ge=0)
    max_outcomes: int = Field(default=5, ge=0)
    max_questions: int = Field(default=5, ge=0)
    max_highlights: int = Field(default=2, ge=0)
    highlight_words: int = Field(default=30, ge=5)
    max_summary_chars: int = Field(default=900, ge=100)
    exclude_speaker_entities: bool = True
    """Speakers' own names are context, not topics: they are left out of key entities."""
    answer_overlap: float = Field(default=0.5, ge=0.0, le=1.0)
    """A question counts as answered when a later memory of another speaker shares this share
    of its content words."""
    min_question_words: int = Field(default=2, ge=1)
    answer_window: int = Field(default=30, ge=1)
    """How many later memories of the stage may answer a question."""
    max_text_chars: int = Field(default=300, ge=50)
    """Memory text read per memory (highlights and answer checks need the beginning only)."""
    batch_size: int = Field(default=50, ge=1)
    """Stages built per round trip."""


class UpkeepConfig(BaseModel):
    """Co-occurrence weights and the projected entity graph for Personalized PageRank."""

    model_config = _FROZEN

    entity_batch: int = Field(default=2_000, ge=1)
    stale_graph_grace_seconds: float = Field(default=300.0, ge=0.0)
    """Superseded projections are dropped only after this long (readers may still use them)."""
    projection_recheck_seconds: float = Field(default=10.0, ge=0.0)
    """A process that has found (or made) the projection of a fingerprint trusts it for this
    long: within it, :func:`~pipelines.consolidate.upkeep.ensure_entity_projection` costs the
    fingerprint read alone (no existence check, no clean-up of stale projections). A
    projection dropped meanwhile (a restart) is caught by the caller's walk failing; it calls
    ``forget_entity_projection`` and asks again. 0: check on every call."""
    projection_heap_share: float = Field(default=0.5, gt=0.0, le=1.0)
    """In-memory graphs may hold at most this share of Neo4j's maximum heap (and never more
    than the heap less ``projection_heap_headroom_mib``): a projection whose estimate would
    pass the budget first evicts idle projections (least recently used first), and is
    refused (503) when that cannot make room, instead of risking the database's heap."""
    projection_heap_headroom_mib: int = Field(default=512, ge=0, le=1_048_576)
    """Heap kept for Neo4j's own transactions and queries whatever the share: the budget is
    ``min(share × heap, heap − headroom)`` (:mod:`~pipelines.consolidate.graph_budget`)."""
    projection_evict_grace_seconds: float = Field(default=60.0, ge=0.0, le=86_400.0)
    """A projection used (or made) within this long is never evicted: a walk may be reading
    it. Use is recorded per process (:mod:`~pipelines.consolidate.graph_catalog`)."""
    projection_max_idle_seconds: float | None = Field(default=1_800.0, gt=0.0, allow_inf_nan=False)
    """A projection not used for this long is dropped (None: never by age); a value below
    ``projection_evict_grace_seconds`` counts as the grace (:attr:`max_idle_seconds`)."""
    projection_sweep_seconds: float = Field(default=60.0, ge=0.0, le=86_400.0)
    """Idle projections are looked for at most once per this long per process (on the way
    out of an ``ensure_entity_projection`` call)."""

    @property
    def max_idle_seconds(self) -> float | None:
        """The idle limit in force: ``projection_max_idle_seconds``, never below the grace."""
        idle = self.projection_max_idle_seconds
        return None if idle is None else max(idle, self.projection_evict_grace_seconds)


class TokenVectorConfig(BaseModel):
    """The ``token_vectors`` job: late-interaction token vectors for memories stored without
    them (before they existed, or in an older format)."""

    model_config = _FROZEN

    batch_size: int = Field(default=256, ge=1, le=10_000)
    """Memories embedded and written per transaction."""


class FactVectorConfig(BaseModel):
    """The ``fact_vectors`` job: embeddings for facts stored without one (before ingest
    embedded them, or imported without vectors)."""

    model_config = _FROZEN

    batch_size: int = Field(default=512, ge=1, le=10_000)
    """Facts embedded and written per transaction."""


class RetentionPolicy(BaseModel):
    """A space's retention policy (``settings.retention``). Facts and schemas are always kept."""

    model_config = _FROZEN

    archive_after_days: float | None = Field(default=None, gt=0.0)
    """Archive memories of ``kinds`` whose event time is older than this (None: never)."""
    kinds: tuple[str, ...] = ("turn",)
    keep_min_importance: float | None = Field(default=None, ge=0.0, le=1.0)
    """Keep memories at least this important."""
    keep_accessed_within_days: float | None = Field(default=30.0, gt=0.0)
    """Keep memories recalled within this many days."""
    delete_archived_after_days: float | None = Field(default=None, gt=0.0)
    """Delete memories archived longer ago than this (None: archived memories stay)."""
    apply: bool = False
    """Scheduled runs only report (dry run) unless this is true."""


class RetentionConfig(BaseModel):
    model_config = _FROZEN

    default_policy: RetentionPolicy = RetentionPolicy()
    batch_size: int = Field(default=2_000, ge=1)


class RunnerConfig(BaseModel):
    model_config = _FROZEN

    lease_ttl_seconds: float = Field(default=60.0, gt=0.0)
    """A lease expires this long after its last renewal: a crashed runner's lease is free (and
    its run reads ``interrupted``) at most this long after the crash."""
    renew_every_seconds: float = Field(default=15.0, gt=0.0)
    """The heartbeat: a live runner renews its lease this often, from a thread of its own, so
    a long statement (a GDS call) never lets the lease lapse; above half of
    ``lease_ttl_seconds`` it counts as half (:attr:`heartbeat_seconds`)."""
    sample_size: int = Field(default=20, ge=0)
    """Planned or applied changes listed in a run's report."""

    @property
    def heartbeat_seconds(self) -> float:
        """How often the lease is renewed: ``renew_every_seconds``, at most half the ttl (one
        missed heartbeat must not lose the lease)."""
        return min(self.renew_every_seconds, self.lease_ttl_seconds / 2)


def _job_pairs_schema(schema: JsonDict) -> None:
    """``[job, seconds]`` pairs: the job is one of :data:`JOB_NAMES` (the schema says so)."""
    items = schema.get("items")
    pair = items.get("prefixItems") if isinstance(items, dict) else None
    if isinstance(pair, list):
        pair[0] = {"enum": list(JOB_NAMES), "type": "string"}


class SchedulerConfig(BaseModel):
    """The in-process scheduler. An interval of ``None`` switches that job off."""

    model_config = _FROZEN

    tick_seconds: float = Field(default=30.0, gt=0.0)
    initial_delay_seconds: float = Field(default=60.0, ge=0.0)
    intervals_seconds: tuple[tuple[str, float | None], ...] = Field(
        default=(
            ("merge", 6 * 3600.0),
            ("supersede", 3600.0),
            ("entity_merge", 6 * 3600.0),
            ("decay", 3600.0),
            ("communities", 24 * 3600.0),
            ("schemas", 6 * 3600.0),
            ("upkeep", 6 * 3600.0),
            ("token_vectors", 6 * 3600.0),
            ("fact_vectors", 6 * 3600.0),
            ("retention", 24 * 3600.0),
        ),
        json_schema_extra=_job_pairs_schema,
    )
    max_spaces: int = Field(default=10_000, ge=1)

    @model_validator(mode="after")
    def _known_jobs(self) -> SchedulerConfig:
        unknown = {j for j, _ in self.intervals_seconds} - set(JOB_NAMES)
        if unknown:
            raise ValueError(f"unknown jobs in intervals: {sorted(unknown)}")
        return self

    def interval(self, job: str) -> float | None:
        return dict(self.intervals_seconds).get(job)


class ConsolidationConfig(BaseModel):
    model_config = _FROZEN

    decay: DecayConfig = DecayConfig()
    merge: MergeConfig = MergeConfig()
    supersede: SupersedeConfig = SupersedeConfig()
    entity_merge: EntityMergeConfig = EntityMergeConfig()
    communities: CommunityConfig = CommunityConfig()
    schemas: SchemaConfig = SchemaConfig()
    upkeep: UpkeepConfig = UpkeepConfig()
    token_vectors: TokenVectorConfig = TokenVectorConfig()
    fact_vectors: FactVectorConfig = FactVectorConfig()
    retention: RetentionConfig = RetentionConfig()
    runner: RunnerConfig = RunnerConfig()
    scheduler: SchedulerConfig = SchedulerConfig()


DEFAULT_CONSOLIDATION_CONFIG = ConsolidationConfig()


_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_intervals(text: str, base: SchedulerConfig | None = None) -> SchedulerConfig:
    """``"decay=30m,merge=6h,retention=off"`` applied over ``base`` (default intervals).

    Units ``s``, ``m``, ``h``, ``d`` (seconds without a unit); ``off`` disables a job. Raises
    ``ValueError`` naming the bad entry.
    """
    base = base or SchedulerConfig()
    intervals = dict(base.intervals_seconds)
    for raw in (text or "").split(","):
        entry = raw.strip()
        if not entry:
            continue
        job, sep, value = (part.strip() for part in entry.partition("="))
        if not sep or job not in JOB_NAMES:
            raise ValueError(f"bad scheduler interval {entry!r}: expected <job>=<interval>")
        if value.lower() in ("off", "none", "never"):
            intervals[job] = None
            continue
        unit = _UNITS.get(value[-1:].lower())
        number = value[:-1] if unit is not None else value
        try:
            seconds = float(number) * (unit or 1.0)
        except ValueError:
            raise ValueError(f"bad scheduler interval {entry!r}") from None
        if seconds <= 0:
            raise ValueError(f"bad scheduler interval {entry!r}: must be positive")
        intervals[job] = seconds
    return base.model_copy(update={"intervals_seconds": tuple(intervals.items())})


def effective_config(
    base: ConsolidationConfig, space_settings: Mapping[str, Any] | None
) -> tuple[ConsolidationConfig, RetentionPolicy]:
    """The configuration for one space: ``base`` with the space's overrides applied.

    ``space_settings["consolidation"]`` maps section names to field overrides;
    ``space_settings["retention"]`` overrides the default retention policy. Both go through
    :func:`~pipelines.overrides.merge_overrides`: a bad override is an :class:`InvalidInput`
    naming the setting (``settings.consolidation.merge.similarity``).
    """
    settings = space_settings or {}
    cfg = merge_overrides(base, settings.get("consolidation"), "settings.consolidation")
    policy = merge_overrides(
        cfg.retention.default_policy, settings.get("retention"), "settings.retention"
    )
    return cfg, policy

"""Stage-aware, token-budgeted context assembly: the ``/context`` service.

Given a query and the reader model's window, :class:`Assembler` returns a prompt whose context
is structured by scope and fits the budget, plus a machine-readable report of every decision.

1. **Validate** the request (4xx naming the field) and read the space (404).
2. **Current stage**: the caller's ``stage`` (id, label or name), else the stage of ``session``,
   else inferred from the query alone: recall over the whole space, each hit voting for its
   stage by rank (``1 / (c + rank)``), plus the stages ranked by the query's similarity to the
   schema summaries already built (``schema_embedding`` index); ties go to the most recent
   stage (:func:`~pipelines.assemble.plan.vote_stages`).  Never from benchmark gold data.
   An inferred stage is trusted in proportion to its vote margin over the runner-up
   (:func:`~pipelines.assemble.plan.stage_confidence`): the current stage's budget share is
   scaled by that confidence and the rest goes to related context, so a coin-flip inference
   does not spend most of the budget on the wrong stage.  A named stage gets its full share.
   **Confidence gate**: an inferred stage at confidence ``<= flat_below_confidence`` (default
   0: no stage stands out) is not used at all; the context is assembled flat and
   ``report.mode_reason`` says why.  **Budget gate**: below ``inferred_stage_min_tokens``
   (800) section tokens no stage is inferred at all: a small context is flat unless the
   caller names its stage.
3. **Density gate** (:func:`~pipelines.assemble.stage_inference.density_gate`): small or sparse
   corpora get flat recall (said so in ``report.mode_reason``); ``flat=True`` forces it.
4. **Phase 1**: recall restricted to the stage, oversampled (``oversample`` x the items the
   phase's share can hold), then greedy MMR ordering of the whole pool
   (:func:`~pipelines.recall.selection.mmr_select`); the head of that order is taken by count.
5. **Phase 2**: the entities of the Phase-1 selection, each weighted by how many of those
   memories mention it, seed Personalized PageRank in GDS over the space's projected entity
   co-occurrence graph (``pipelines.consolidate.upkeep.ensure_entity_projection``, refreshed
   when the graph changes, never per request).  GDS 2.13 has no per-seed weights: seeds of
   equal weight form a group, one ``gds.pageRank.stream`` per group, combined linearly
   (:func:`~pipelines.assemble.ppr.combine_seed_runs`).  Memories outside the current stage are
   then scored in Cypher by the PPR mass of the entities they mention.  That ranking is fused
   (weighted RRF, ``related_ppr_weight`` / ``related_recall_weight``) with the same memories'
   rank in whole-space recall: PPR alone is blind to the query (every memory naming a
   frequent entity scores alike); ``related_recall_weight=0`` is the pure PPR design.
6. **Phase 3**: schema summaries (``pipelines.consolidate.schemas.ensure_schemas``, built on
   demand and cached) of stages not covered by phases 1-2, nearest in time first.
7. **Plan and render**: each phase takes at least its minimum count, then what fits its share
   of the budget (60/30/10 by default), then whatever is left, most important phase first
   (:func:`~pipelines.assemble.plan.plan_phase_counts`).  Items are escaped, delimited data
   blocks with provenance (:mod:`pipelines.assemble.blocks`); a record's time shows the time
   of day only where the candidates of that date differ in it (``record_time_precision``).
   A section's records that share ``[when | stage]`` sit together under one such line, so
   the plan charges that line to the first record of each group
   (:func:`~pipelines.assemble.plan.grouped_costs`; flat mode's first-fit packing likewise).
   The plan adds up per-item estimates, each rounded up; what the sections as rendered leave
   of the budget takes further items in rank order (:func:`~pipelines.assemble.sections.top_up`).
   A summaries section with no summary selected is left out of the prompt.
8. **Decompose**: the caller's template slots, the three sections and the query go through
   :func:`~pipelines.assemble.decomposer.decompose` (priorities, condensers, safety loop,
   truncation banner naming every slot kept below 90 %).

Latency: reads that need nothing from the step before them run on the assembler's small
read-ahead pool beside the recalls (the stage list, the projection check, the summary
similarity, and Phase 3's schemas for the nearest stages while Phases 1-2 run); the results
are the same as reading them in turn.

Validity: superseded memories are left out unless ``include_superseded``; ``as_of`` assembles
the context as it was then (memories with ``event_time <= as_of`` not superseded by then, stages
started by then, summaries only of stages that had ended by then).
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
from neo4j.exceptions import Neo4jError
from pydantic import ValidationError

from pipelines import spaces
from pipelines.assemble.blocks import (
    DATA_NOTICE,
    RECORDS_TAG,
    MemoryRecord,
    StageSummaryRecord,
    group_records,
    parse_blocks,
    parse_records,
    record_group,
    record_head,
    render_memory_line,
    render_record_lines,
    render_summary_block,
)
from pipelines.assemble.budget import split_budget
from pipelines.assemble.condensers import CONDENSERS
from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG, AssemblyConfig
from pipelines.assemble.decomposer import DecomposedPrompt, Slot, decompose
from pipelines.assemble.plan import (
    StageSpan,
    build_template,
    confident_split,
    dates_needing_minutes,
    extend_prefixes,
    grouped_costs,
    order_stages_by_distance,
    plan_phase_counts,
    prompt_budget,
    record_time,
    render_schema,
    seed_groups,
    short_time,
    stage_confidence,
    vote_stages,
)
from pipelines.assemble.ppr import (
    combine_seed_runs,
    memories_without_entities,
    seed_weights_from_memories,
    top_entities,
)
from pipelines.assemble.sections import (
    BLOCK_SEPARATOR,
    ContextSections,
    SectionKind,
    fit_sections,
    pack_to_budget,
    render_memory_section,
    render_summary_section,
    top_up,
)
from pipelines.assemble.stage_inference import density_gate
from pipelines.assemble.tokens import CharsPerToken, TokenEstimator
from pipelines.errors import InvalidInput, NotFound
from pipelines.graph import as_utc, from_epoch_micros, to_native
from pipelines.recall.config import DEFAULT_RECALL_CONFIG, RecallConfig
from pipelines.recall.fusion import weighted_rrf
from pipelines.recall.intent import Intent
from pipelines.recall.request import MAX_K, MAX_QUERY_CHARS
from pipelines.recall.selection import mmr_select
from pipelines.recall.service import Recaller, RecallFilters, RecallHit, RecallRequest

__all__ = [
    "ABLATIONS",
    "SECTION_KEYS",
    "Assembler",
    "ContextRequest",
    "ContextResponse",
    "TemplateSlot",
]

SECTION_KEYS: tuple[str, str, str] = ("current_stage", "related_prior", "stage_summaries")
"""Response section names, in phase order."""
FLAT_SECTION = "recalled"
"""The single section of the flat-recall mode."""
ABLATIONS = frozenset({"selection", "ppr", "summaries"})
_SLOT_OF = {key: key.upper() for key in (*SECTION_KEYS, FLAT_SECTION)}
QUERY_SLOT = "QUERY"
RESERVED_SLOTS = frozenset({*_SLOT_OF.values(), QUERY_SLOT})
_KINDS = (SectionKind.CURRENT_STAGE, SectionKind.RELATED_PRIOR, SectionKind.STAGE_SUMMARIES)
_FLAT_HEADER = "## Recalled memories"
_FLAT_EMPTY = "(No memories were recalled.)"
_PHASE_PRESET = "full"
_SPACE_PRESET = "full"
"""Preset of whole-space recall: stage inference, Phase 2's recall ranking, flat mode."""


# ----------------------------------------------------------------------------- interface


@dataclass
class TemplateSlot:
    """A caller-supplied prompt section (system prompt, recent messages, ...).

    ``priority``: lower = more important = condensed last (the query has
    ``config.query_priority``, the context sections ``config.section_priorities``).
    ``condenser``: a name from :data:`~pipelines.assemble.condensers.CONDENSERS`, or ``None``
    to choose by content shape.  Caller slots are placed first, in the order given, and are
    trusted text (not escaped).
    """

    key: str
    content: str
    priority: int
    condenser: str | None = None


@dataclass
class ContextRequest:
    query: str
    context_window: int
    headroom: float = 0.75
    split: tuple[float, float, float] = (0.6, 0.3, 0.1)
    stage: str | None = None
    session: str | None = None
    template: list[TemplateSlot] | None = None
    as_of: datetime | None = None
    explain: bool = False
    now: datetime | None = None
    flat: bool = False
    """Force the flat-recall baseline (benchmarks, ablation)."""
    ablate: frozenset[str] = frozenset()
    """Switch off ``selection`` (MMR), ``ppr`` (Phase 2) or ``summaries`` (Phase 3)."""
    include_superseded: bool = False


@dataclass
class ContextResponse:
    sections: dict[str, str]
    """``current_stage``, ``related_prior``, ``stage_summaries`` (and ``recalled`` in flat
    mode): the section text as it stands in the prompt."""
    prompt: str
    report: dict[str, Any]
    included_ids: dict[str, list[str]]
    """Memory ids per section whose block made it into the prompt (summaries are not
    memories: their stage ids are in ``report.phases.stage_summaries.included_stages``)."""


# ----------------------------------------------------------------------------- internals


def _costs(items: Sequence[_Item]) -> list[int]:
    """What each item of a ranked phase list adds to its section (its record line, and its
    group line if it is the group's first record)."""
    return grouped_costs([(i.group, i.tokens, i.group_tokens) for i in items])


@dataclass
class _SpaceRecall:
    """One whole-space recall of an assembly: the k asked for, the hits valid at ``as_of``
    (rank order), and the query's intent."""

    k: int
    hits: list[RecallHit]
    intent: str


def _grouped(items: Sequence[_Item]) -> list[_Item]:
    """A section's items in display order: each ``[when | stage]`` group together, groups in
    the order of their best-ranked item, rank order inside a group (summaries keep theirs)."""
    if not any(i.group is not None for i in items):
        return list(items)
    return group_records(items, lambda i: i.group or "")


def _records_text(items: Sequence[_Item]) -> str:
    """The ``<memories>`` block of memory items, grouped (:func:`_grouped`), from their
    rendered lines."""
    pairs = []
    for item in _grouped(items):
        if item.group is None:
            raise AssertionError(f"item {item.id!r} is not a memory record")
        pairs.append((item.group, item.block))
    return render_record_lines(pairs)


def _surviving(items: Sequence[_Item], openings: Sequence[str]) -> list[_Item]:
    """The items whose blocks (or records) are still in a section after condensing.

    Condensing keeps them in order and only ever drops trailing ones, so the k-th one left is
    the k-th item (openings need not be unique: two memories of one speaker at one time share
    theirs). Each pairing is checked against the opening line (a record's head) anyway.
    """
    present = []
    for item, opening in zip(items, openings, strict=False):
        if item.opening != opening:
            raise AssertionError(f"{opening!r} does not belong to item {item.id!r}")
        present.append(item)
    return present


@dataclass
class _Item:
    """One candidate record of a phase, rendered."""

    id: str
    block: str
    tokens: int
    stage_id: str | None = None
    score: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    head: str | None = None
    """A memory record's full head (``[when | stage] who: ``); ``None`` for summary blocks."""
    group: str | None = None
    """A memory record's group line (``[when | stage]``), shared by the section's records
    with the same one; ``None`` for summary blocks."""
    group_tokens: int = 0
    """Tokens of :attr:`group` and its line break, paid once per group in a section."""
    record: MemoryRecord | None = None
    moment: datetime | None = None
    """A memory's time (UTC), from which :meth:`_Run._retime` sets the record's precision."""

    @property
    def opening(self) -> str:
        return self.head if self.head is not None else self.block.split("\n", 1)[0]


@dataclass
class _Stage:
    id: str
    name: str | None
    kind: str | None
    started_at: datetime | None
    ended_at: datetime | None
    ordinal: int | None

    @property
    def label(self) -> str:
        return _one_line(self.name or self.id)

    def span(self) -> StageSpan:
        return StageSpan(self.id, self.started_at, self.ended_at, self.ordinal)


class _Clock:
    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.timings: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = round((now - self.last) * 1000.0, 2)
        self.last = now

    def total(self) -> dict[str, float]:
        self.timings["total"] = round((time.perf_counter() - self.start) * 1000.0, 2)
        return self.timings


def _one_line(text: str, limit: int = 80) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _stage_row(row: dict[str, Any]) -> _Stage:
    return _Stage(
        id=row["id"],
        name=row.get("name"),
        kind=row.get("kind"),
        # Times as epoch microseconds: the stage list is read on every call, and hydrating
        # hundreds of DateTimes cost more than the query (assemble/stages).
        started_at=from_epoch_micros(row.get("started_at_us")),
        ended_at=from_epoch_micros(row.get("ended_at_us")),
        ordinal=row.get("ordinal"),
    )


def _timestamp(moment: datetime | None) -> float:
    return moment.timestamp() if moment is not None else float("-inf")


class _MemoEmbedder:
    """The engine's embedder with a small LRU memo: one assembly asks recall several times
    (stage inference, Phase 1) about the same query, which would otherwise be embedded each
    time.  Thread-safe."""

    def __init__(self, inner: Any, size: int = 512) -> None:
        self.inner = inner
        self.size = size
        self._memo: OrderedDict[str, tuple[np.ndarray, Any]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def dimensions(self) -> int:
        return int(self.inner.dimensions)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode_with_tokens(texts)[0]

    def encode_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[Any]]:
        """Vectors and late-interaction token vectors (None for each text when the inner
        embedder has no ``encode_with_tokens``). Both come from one forward pass, so the
        memo keeps both whatever was asked first."""
        texts = list(texts)
        if not texts:
            return self.inner.encode(texts), []
        with self._lock:
            found = {t: self._memo[t] for t in texts if t in self._memo}
            for t in found:
                self._memo.move_to_end(t)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            with_tokens = getattr(self.inner, "encode_with_tokens", None)
            if with_tokens is not None:
                vectors, tokens = with_tokens(missing)
            else:
                vectors, tokens = self.inner.encode(missing), [None] * len(missing)
            with self._lock:
                for t, v, tok in zip(missing, vectors, tokens, strict=True):
                    found[t] = (v, tok)
                    self._memo[t] = (v, tok)
                    self._memo.move_to_end(t)
                while len(self._memo) > self.size:
                    self._memo.popitem(last=False)
        return np.stack([found[t][0] for t in texts]), [found[t][1] for t in texts]


# ----------------------------------------------------------------------------- the service


class Assembler:
    """Context-assembly service. Stateless apart from the engine, configuration and recall's
    per-space profile cache; thread-safe."""

    def __init__(
        self,
        engine: Any,
        config: AssemblyConfig = DEFAULT_ASSEMBLY_CONFIG,
        recall_config: RecallConfig | None = None,
        estimator: TokenEstimator | None = None,
    ) -> None:
        self.engine = engine
        self.config = config
        self.embedder = _MemoEmbedder(engine.embedder)
        # The round trips recall sends ahead (its embedding-free signals, its session ranking).
        self.recall_threads = ThreadPoolExecutor(max_workers=8, thread_name_prefix="recall")
        self.recaller = Recaller(
            engine,
            recall_config or DEFAULT_RECALL_CONFIG,
            embedder=self.embedder,
            executor=self.recall_threads,
        )
        self.estimator = estimator
        self._density: dict[tuple[str, tuple[str, ...]], tuple[float, dict[str, Any]]] = {}
        self._density_lock = threading.Lock()
        # Reads an assembly can issue ahead of the step that needs them (the stage list, the
        # projection check, stage-summary similarity, Phase 3's schemas) run here, beside the
        # recalls. Tasks never submit tasks, so a busy pool only queues.
        self.read_ahead = ThreadPoolExecutor(max_workers=8, thread_name_prefix="assemble")

    def density_counts(
        self, space: str, statuses: Sequence[str], as_of: datetime | None, ttl_s: float
    ) -> dict[str, Any]:
        """Memories and stages of a space for the density gate, cached for ``ttl_s`` seconds
        (not with ``as_of``: those counts depend on the moment)."""
        key = (space, tuple(statuses))
        now = time.monotonic()
        if as_of is None and ttl_s > 0:
            with self._density_lock:
                hit = self._density.get(key)
            if hit is not None and hit[0] > now:
                return hit[1]
        row = self.engine.store.read(
            "assemble/density", space=space, statuses=list(statuses), as_of=as_of
        )[0]
        if as_of is None and ttl_s > 0:
            with self._density_lock:
                self._density[key] = (now + ttl_s, row)
        return row

    # ------------------------------------------------------------------ public API

    def assemble(self, space: str, request: ContextRequest) -> ContextResponse:
        clock = _Clock()
        template = self._validate(request)
        space_data = spaces.get(self.engine.store, space)  # 404 for an unknown space
        config = self._config_for(space_data, request)
        est = self.estimator or CharsPerToken(config.chars_per_token)
        as_of = as_utc(request.as_of)
        now = as_utc(request.now) or as_of
        run = _Run(self, space, request, config, est, template, as_of, now, clock)
        return run.execute()

    def entity_pagerank(
        self,
        space: str,
        seed_weights: dict[str, float],
        config: AssemblyConfig | None = None,
        graph: str | None = None,
    ) -> tuple[dict[str, float], dict[str, Any]]:
        """Personalized PageRank over the space's projected entity graph with weighted seeds
        (entity key -> weight), in GDS: one ``gds.pageRank.stream`` per group of equal-weight
        seeds, combined linearly (:func:`~pipelines.assemble.ppr.combine_seed_runs`).

        Returns ``(mass by entity key, facts)`` where the mass sums to the share of the walk
        that landed on the entities streamed back (each run keeps its top
        ``ppr_entities_per_run``; all of it when that covers the graph) and ``facts`` reports
        the projection name, runs and groups.  ``({}, {"graph": None, ...})`` when the space
        has no entities. ``graph``: the projection name from a just-made
        ``ensure_entity_projection`` call (else it is made here). A walk that fails (the
        projection was dropped meanwhile) is retried once on a re-checked projection.
        """
        from pipelines.consolidate.upkeep import (
            ensure_entity_projection,
            forget_entity_projection,
        )

        cfg = config or self.config
        groups = seed_groups(seed_weights)
        facts: dict[str, Any] = {"graph": None, "seed_groups": len(groups), "ppr_runs": 0}
        if not groups:
            return {}, facts
        if graph is None:
            graph = ensure_entity_projection(self.engine, space)
        facts["graph"] = graph
        if graph is None:
            return {}, facts

        runs_of = [{"id": n, "keys": keys} for n, (_, keys) in enumerate(groups)]

        def stream(name: str, part: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return self.engine.store.read(
                "assemble/ppr_stream",
                space=space,
                graph=name,
                groups=part,
                weight_property="weight",
                damping=cfg.ppr_damping,
                max_iterations=cfg.ppr_max_iterations,
                tolerance=cfg.ppr_tolerance,
                concurrency=cfg.ppr_concurrency,
                per_run=cfg.ppr_entities_per_run,
            )

        def walk(name: str) -> list[dict[str, Any]]:
            if len(runs_of) == 1 or not cfg.ppr_parallel_runs:
                return stream(name, runs_of)
            # One read per seed group, all but the first on the read-ahead pool (this method
            # is never itself a pool task); a failed walk raises here, as one statement would.
            rest = [self.read_ahead.submit(stream, name, [run]) for run in runs_of[1:]]
            rows = stream(name, runs_of[:1])
            for future in rest:
                rows.extend(future.result())
            return rows

        try:
            rows = walk(graph)
        except Neo4jError:
            forget_entity_projection(self.engine, space)
            graph = ensure_entity_projection(self.engine, space)
            facts["graph"] = graph
            facts["projection_rechecked"] = True
            if graph is None:
                return {}, facts
            rows = walk(graph)
        runs: dict[int, dict[str, float]] = {}
        for r in rows:
            runs.setdefault(int(r["run"]), {})[r["key"]] = float(r["score"])
        facts["ppr_runs"] = len(runs)
        if len(runs) < len(groups):
            facts["seed_groups_without_nodes"] = len(groups) - len(runs)
        # GDS scores a multi-source run as the sum of its single-source runs (each summing to
        # 1), so the weighted combination is sum_g w_g * run_g; normalise to one unit of mass.
        weights = {n: w * len(groups[n][1]) for n, (w, _) in enumerate(groups) if n in runs}
        scaled = {n: {k: v / len(groups[n][1]) for k, v in run.items()} for n, run in runs.items()}
        return combine_seed_runs(scaled, weights), facts

    # ------------------------------------------------------------------ validation

    def _validate(self, request: ContextRequest) -> list[TemplateSlot]:
        cfg = self.config
        if not isinstance(request.query, str) or not request.query.strip():
            raise InvalidInput("query must not be empty", field="query")
        max_chars = MAX_QUERY_CHARS
        if len(request.query) > max_chars:
            raise InvalidInput(f"query is longer than {max_chars} characters", field="query")
        window = request.context_window
        if isinstance(window, bool) or not isinstance(window, int):
            raise InvalidInput("context_window must be an integer", field="context_window")
        if not cfg.min_context_window <= window <= cfg.max_context_window:
            raise InvalidInput(
                f"context_window must be between {cfg.min_context_window} and "
                f"{cfg.max_context_window} tokens, got {window}",
                field="context_window",
            )
        headroom = request.headroom
        if not isinstance(headroom, int | float) or not (
            math.isfinite(headroom) and 0 < headroom <= 1
        ):
            raise InvalidInput("headroom must be in (0, 1]", field="headroom")
        split = tuple(request.split)
        if (
            len(split) != 3
            or not all(isinstance(p, int | float) and math.isfinite(p) and p >= 0 for p in split)
            or not math.isclose(sum(split), 1.0, rel_tol=0.0, abs_tol=1e-6)
        ):
            raise InvalidInput(
                "split must be three non-negative shares summing to 1, got "
                f"{list(request.split)!r}",
                field="split",
            )
        unknown = set(request.ablate) - ABLATIONS
        if unknown:
            raise InvalidInput(
                f"unknown ablation {sorted(unknown)}; known: {sorted(ABLATIONS)}", field="ablate"
            )
        slots = list(request.template or [])
        seen: set[str] = set()
        for i, slot in enumerate(slots):
            key = slot.key
            if not isinstance(key, str) or not key or not key.replace("_", "a").isalnum():
                raise InvalidInput(
                    "template slot keys are letters, digits and '_'", field=f"template.{i}.key"
                )
            if not key.isascii():
                raise InvalidInput(
                    "template slot keys are ASCII letters, digits and '_'",
                    field=f"template.{i}.key",
                )
            if key.upper() in RESERVED_SLOTS:
                raise InvalidInput(
                    f"template slot key {key!r} is reserved ({sorted(RESERVED_SLOTS)})",
                    field=f"template.{i}.key",
                )
            if key.upper() in seen:
                raise InvalidInput(
                    f"template slot key {key!r} is repeated", field=f"template.{i}.key"
                )
            seen.add(key.upper())
            if not isinstance(slot.content, str):
                raise InvalidInput("content must be text", field=f"template.{i}.content")
            if isinstance(slot.priority, bool) or not isinstance(slot.priority, int):
                raise InvalidInput("priority must be an integer", field=f"template.{i}.priority")
            if slot.condenser is not None and slot.condenser not in CONDENSERS:
                raise InvalidInput(
                    f"unknown condenser {slot.condenser!r}; known: {sorted(CONDENSERS)}",
                    field=f"template.{i}.condenser",
                )
        return slots

    def _config_for(self, space_data: dict[str, Any], request: ContextRequest) -> AssemblyConfig:
        """The service's config with the space's ``settings.assembly`` overrides and the
        request's headroom and split."""
        overrides = (space_data.get("settings") or {}).get("assembly") or {}
        base = self.config.model_dump()
        if overrides:
            if not isinstance(overrides, dict):
                raise InvalidInput(
                    "space setting 'assembly' must be an object", field="settings.assembly"
                )
            try:
                base = AssemblyConfig(**{**base, **overrides}).model_dump()
            except ValidationError as exc:
                raise InvalidInput(
                    f"bad assembly settings of space: {exc.errors()[0].get('msg')}",
                    field="settings.assembly",
                ) from exc
        try:
            return AssemblyConfig(
                **{**base, "headroom": float(request.headroom), "split": tuple(request.split)}
            )
        except ValidationError as exc:  # already validated; keep the field if it still fails
            raise InvalidInput(str(exc.errors()[0].get("msg")), field="split") from exc


class _Run:
    """One assembly: the request's state and the phases, in order."""

    def __init__(
        self,
        service: Assembler,
        space: str,
        request: ContextRequest,
        config: AssemblyConfig,
        est: TokenEstimator,
        template_slots: list[TemplateSlot],
        as_of: datetime | None,
        now: datetime | None,
        clock: _Clock,
    ) -> None:
        self.service = service
        self.engine = service.engine
        self.store = service.engine.store
        self.recaller = service.recaller
        self.space = space
        self.request = request
        self.config = config
        self.est = est
        self.caller_slots = template_slots
        self.as_of = as_of
        self.now = now
        self.clock = clock
        self.explain = request.explain
        # Event-order question (whole-space recall's intent): records shown in time order.
        self.time_order = False
        self.report: dict[str, Any] = {
            "validity": {
                "include_superseded": request.include_superseded,
                "as_of": as_of.isoformat() if as_of else None,
            },
            "ablate": sorted(request.ablate),
        }

    # ------------------------------------------------------------------ orchestration

    def execute(self) -> ContextResponse:
        current, how = self._named_stage()
        self.clock.lap("stage_lookup")
        mode, reason = self._mode()
        self.clock.lap("density")
        self.report["mode"] = mode
        self.report["mode_reason"] = reason
        if mode == "flat":
            response = self._flat()
            if current is not None:
                self._report_stage(
                    current, str(how), False, reasoning="flat mode: the stage is not used"
                )
            return response
        return self._staged(current, how)

    def _named_stage(self) -> tuple[_Stage | None, str | None]:
        """The stage the caller named (``stage``, else ``session``); 404 if unknown."""
        req = self.request
        if req.stage is not None:
            name = str(req.stage)
            ids = list(dict.fromkeys([name, "label:" + " ".join(name.split()).casefold()]))
            rows = self.store.read("assemble/stage_lookup", space=self.space, ids=ids, name=name)
            if not rows:
                raise NotFound(f"stage {name!r} does not exist in this space", field="stage")
            return _stage_row(rows[0]), "caller"
        if req.session is not None:
            rows = self.store.read(
                "assemble/session_stage", space=self.space, session=str(req.session)
            )
            if not rows:
                raise NotFound(
                    f"session {req.session!r} does not exist in this space", field="session"
                )
            if rows[0]["id"] is None:
                return None, None
            return _stage_row(rows[0]), "session"
        return None, None

    def _mode(self) -> tuple[str, str]:
        if self.request.flat:
            self.report["density"] = None
            return "flat", "flat recall requested (flat=true)"
        statuses = ["active", "superseded"] if self.request.include_superseded else ["active"]
        if self.as_of is not None:
            statuses = ["active", "superseded"]
        row = self.service.density_counts(
            self.space, statuses, self.as_of, self.config.density_cache_ttl_s
        )
        memories, stages = int(row["memories"]), int(row["stages"])
        dims = self.engine.embedder.dimensions
        decision = density_gate(memories, stages, self.config, dimensions=dims)
        self.report["density"] = {
            "memories": memories,
            "stages": stages,
            "memories_per_stage": round(decision.memories_per_stage, 3),
            "memories_per_dimension": round(memories / dims, 3),
            "use_stages": decision.use_stages,
        }
        return ("staged" if decision.use_stages else "flat"), decision.reason

    # ------------------------------------------------------------------ staged mode

    def _staged(self, current: _Stage | None, how: str | None) -> ContextResponse:
        from pipelines.consolidate.upkeep import ensure_entity_projection

        cfg = self.config
        keys = [_SLOT_OF[k] for k in SECTION_KEYS]
        template, budget = self._template(keys)
        section_budget = self._section_budget(budget.content_budget)
        least = cfg.inferred_stage_min_tokens
        if current is None and least is not None and section_budget < least:
            return self._flat_instead(
                f"budget too small for an inferred stage: {section_budget} section tokens < "
                f"inferred_stage_min_tokens {least}; flat recall over the space",
                None,
                "none",
                reasoning="not inferred: the sections' budget is below inferred_stage_min_tokens",
            )
        ahead = self.service.read_ahead.submit
        # Reads that need nothing from the steps before them start now, beside global recall.
        stages_ahead = ahead(self.store.read, "assemble/stages", space=self.space, as_of=self.as_of)
        projection_ahead: Future[str | None] | None = None
        if self._use_ppr():
            projection_ahead = ahead(ensure_entity_projection, self.engine, self.space)
        similarity_ahead = None
        if current is None and cfg.stage_vote_weight_summaries > 0:
            similarity_ahead = self._summary_similarity_ahead()
        most = split_budget(section_budget, confident_split(cfg.split, 0.0))

        need_global = current is None or cfg.related_recall_weight > 0
        has_stages = self._stage_count() > 0
        # When the confidence gate may yet choose flat mode, whole-space recall is sized for
        # it, so a gated call recalls once rather than twice.
        may_go_flat = current is None and cfg.flat_below_confidence is not None
        global_k = self._global_k(most[1], self._flat_k() if may_go_flat else 0)
        space_recall = self._space_recall(global_k) if need_global and has_stages else None
        global_hits = space_recall.hits if space_recall else []
        stages = {s.id: s for s in (_stage_row(r) for r in stages_ahead.result())}
        self.clock.lap("global_recall")
        if current is None:
            current, stage_report, confidence = self._infer_stage(
                stages, global_hits, similarity_ahead
            )
            self.clock.lap("stage_inference")
            gate = cfg.flat_below_confidence
            if gate is not None and confidence <= gate:
                name = current.name if current else None
                return self._flat_instead(
                    f"stage inference not confident: {name or 'no stage'} at confidence "
                    f"{confidence:.3f} <= flat_below_confidence {gate:g}; flat recall over the "
                    "space",
                    current,
                    "inferred" if current else "none",
                    **stage_report,
                    confidence=round(confidence, 4),
                    recalled=space_recall,
                )
        else:
            stage_report = {"reasoning": f"named by the caller ({how})"}
            confidence = 1.0
            stages.setdefault(current.id, current)
        split = confident_split(cfg.split, confidence)
        stage_report["confidence"] = round(confidence, 4)
        shares = split_budget(section_budget, split)
        minimums = (self._minimum(shares[0]), self._minimum(shares[1]), 0)
        how = how or ("inferred" if current else "none")
        self._report_stage(current, how, current is not None, **stage_report)

        summaries_ahead = None
        if "summaries" not in self.request.ablate:
            summaries_ahead = self._summaries_ahead(current, stages, shares[2], minimums[1])
        phase1 = self._phase1(current, shares[0])
        self.clock.lap("phase1")
        seed_count = plan_phase_counts(
            [_costs(phase1), [], []], shares[0], (1.0, 0.0, 0.0), (minimums[0], 0, 0)
        ).counts[0]
        seeds = phase1[:seed_count]

        phase2: list[_Item] = []
        p2_report: dict[str, Any] = {"run": False}
        if current is None:
            p2_report["reason"] = "no current stage"
        else:
            phase2, p2_report = self._phase2(
                current,
                seeds,
                phase1,
                shares[1],
                stages,
                global_hits,
                projection_ahead,
                confidence,
            )
        self.clock.lap("phase2")
        self._retime(phase1, phase2)

        covered = {current.id} if current else set()
        covered |= {i.stage_id for i in phase2[: max(minimums[1], 1)] if i.stage_id is not None}
        phase3: list[_Item] = []
        p3_report: dict[str, Any] = {"run": False}
        if "summaries" in self.request.ablate:
            p3_report["reason"] = "ablated"
        else:
            phase3, p3_report = self._phase3(current, covered, stages, shares[2], summaries_ahead)
        self.clock.lap("phase3")

        phases = [phase1, phase2, phase3]
        label = current.label if current else None
        frames = [  # headers (or the "nothing here" notes), at most, outside the items
            self.est.count(self._section_text(kind, [], label if n == 0 else None)) + 1
            for n, kind in enumerate(_KINDS)
        ]
        tokens = [_costs(items) for items in phases]
        plan = plan_phase_counts(tokens, max(0, section_budget - sum(frames)), split, minimums)
        if plan.counts[2] == 0:
            # No summary goes in: the section is left out, and its header and note are room
            # for memories (kept only if the summaries still get nothing with that room).
            roomier = plan_phase_counts(
                tokens, max(0, section_budget - sum(frames[:2])), split, minimums
            )
            plan = roomier if roomier.counts[2] == 0 else plan
        with_summaries = plan.counts[2] > 0
        counts = self._top_up_phases(phases, plan.counts, label, with_summaries, section_budget)
        chosen = [
            _grouped(self._display_order(items[:n]) if n_phase < 2 else items[:n])
            for n_phase, (items, n) in enumerate(zip(phases, counts, strict=True))
        ]
        sections = ContextSections(
            self._section_text(SectionKind.CURRENT_STAGE, chosen[0], label),
            self._section_text(SectionKind.RELATED_PRIOR, chosen[1], None),
            self._section_text(SectionKind.STAGE_SUMMARIES, chosen[2], None)
            if with_summaries
            else "",
        )
        fitted = fit_sections(sections, section_budget, self.est, split)
        fitted_texts = (
            fitted.sections.current_stage,
            fitted.sections.related_prior,
            fitted.sections.stage_summaries,
        )
        shown = keys if with_summaries else keys[:2]
        if not with_summaries:
            template, _ = self._template(shown)
        context_slots = [
            Slot(
                key,
                text,
                cfg.section_priorities[i],
                "memory_blocks",
                upstream_tokens=fitted.original_tokens[i],
            )
            for i, (key, text) in enumerate(zip(shown, fitted_texts, strict=False))
        ]
        result = self._decompose(template, context_slots)
        self.clock.lap("decompose")

        phase_reports = {
            "current_stage": {
                "candidates": len(phase1),
                "selection": "score" if "selection" in self.request.ablate else "mmr",
                **self._phase_counts(phase1, counts[0], minimums[0], shares[0]),
            },
            "related_prior": {
                **p2_report,
                **self._phase_counts(phase2, counts[1], minimums[1], shares[1]),
            },
            "stage_summaries": {
                **p3_report,
                **self._phase_counts(phase3, counts[2], minimums[2], shares[2]),
            },
        }
        if not with_summaries:
            phase_reports["stage_summaries"].update(
                included=0, included_stages=[], section="left out: no summary selected"
            )
        items_by_section = dict(zip(SECTION_KEYS, chosen, strict=True))
        return self._respond(
            result,
            dict(zip(SECTION_KEYS, shown, strict=False)),
            items_by_section,
            phase_reports,
            budget_report={
                **self._budget_report(budget, section_budget),
                "effective_split": [round(x, 4) for x in split],
                "phase_shares": list(plan.shares),
                "phase_planned_tokens": list(plan.tokens),
                "phase_granted": list(fitted.allocation.granted),
            },
        )

    def _top_up_phases(
        self,
        phases: Sequence[Sequence[_Item]],
        planned: Sequence[int],
        label: str | None,
        with_summaries: bool,
        section_budget: int,
    ) -> list[int]:
        """The plan's counts, with the memory phases' prefixes extended (most important phase
        first, as the plan's leftover step does) while the sections *as rendered* still fit
        ``section_budget``: the plan adds up per-item estimates and frames, each rounded up,
        so the rendered sections usually count a few tokens less than it assumed."""
        kinds = _KINDS if with_summaries else _KINDS[:2]

        def fits(trial: Sequence[int]) -> bool:
            used = sum(
                self.est.count(
                    self._section_text(kind, phases[n][: trial[n]], label if n == 0 else None)
                )
                for n, kind in enumerate(kinds)
            )
            return used <= section_budget

        return extend_prefixes(planned, [len(p) for p in phases], fits, phases=(0, 1))

    def _flat_instead(
        self,
        reason: str,
        stage: _Stage | None,
        how: str,
        recalled: _SpaceRecall | None = None,
        **details: Any,
    ) -> ContextResponse:
        """A gate chose flat mode over a staged assembly: say why, report the stage (not
        used), assemble flat (from ``recalled``, the whole-space recall already made, when
        it was made with flat mode's k)."""
        self.report["mode"] = "flat"
        self.report["mode_reason"] = reason
        self._report_stage(stage, how, False, **details)
        return self._flat(recalled)

    def _report_stage(self, stage: _Stage | None, how: str, used: bool, **details: Any) -> None:
        """``report.stage``: which stage, how it was found, whether the context used it, why."""
        self.report["stage"] = {
            "id": stage.id if stage else None,
            "name": stage.name if stage else None,
            "how": how,
            "used": used,
            **details,
        }

    def _phase_counts(
        self, items: Sequence[_Item], count: int, minimum: int, share: int
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "selected": count,
            "dropped": max(0, len(items) - count),
            "minimum": minimum,
            "share_tokens": share,
        }
        if self.explain:
            out["items"] = [
                {
                    "id": i.id,
                    "tokens": i.tokens,
                    "score": i.score,
                    "selected": n < count,
                    **i.detail,
                }
                for n, i in enumerate(items)
            ]
        return out

    def _minimum(self, share: int) -> int:
        """Minimum item count of a phase: ``max_chunks_per_phase``, but no more than its share
        holds at the *expected* item size (so tiny budgets are not overrun by design; long
        items never reduce the count)."""
        cfg = self.config
        return min(cfg.max_chunks_per_phase, max(1, share // cfg.expected_item_tokens))

    # ------------------------------------------------------------------ current stage

    def _global_k(self, related_share: int, at_least: int) -> int:
        """k of whole-space recall in staged mode: enough hits to vote for the current stage
        and to rank twice what Phase 2's share holds, and ``at_least`` (flat mode's k when a
        gate may still choose flat mode, so that recall serves both)."""
        cfg = self.config
        related = max(cfg.max_chunks_per_phase, math.ceil(related_share / cfg.expected_item_tokens))
        wanted = max(cfg.stage_inference_hits, 2 * related, at_least)
        return min(MAX_K, wanted)

    def _space_recall(self, k: int) -> _SpaceRecall:
        """Recall over the whole space, in rank order (event-order questions too: what is
        packed is chosen by relevance, and shown in time order by :meth:`_display_order`):
        the hits valid at ``as_of``. Stage inference votes with it, Phase 2 ranks other
        stages' memories by it, and flat mode packs it."""
        resp = self.recaller.recall(
            self.space,
            RecallRequest(
                query=self.request.query,
                k=k,
                filters=RecallFilters(time_to=self.as_of),
                include_superseded=self.request.include_superseded or self.as_of is not None,
                touch=False,
                now=self.now,
                preset=_SPACE_PRESET,
                session_novelty=0.0,  # packed by budget: see RecallRequest.session_novelty
                order="relevance",
            ),
        )
        self.time_order = resp.intent == str(Intent.EVENT_ORDER)
        return _SpaceRecall(k, self._valid(resp.results), resp.intent)

    def _display_order(self, items: Sequence[_Item]) -> list[_Item]:
        """Memory records as a section shows them: for event-order questions in time order
        (chosen by relevance, read in sequence), else in the given (rank) order."""
        if not self.time_order:
            return list(items)
        return sorted(items, key=lambda i: _timestamp(i.moment))

    def _summary_similarity_ahead(self) -> Future[list[dict[str, Any]]]:
        """Start reading the query's similarity to the stage summaries (for stage inference).
        The query is embedded here as global recall will embed it (the memo then spares
        recall the work), so the read runs beside that recall."""
        text = self.recaller.vector_text(self.space, self.request.query, _SPACE_PRESET)
        embedding = self.service.embedder.encode([text])[0]
        count = max(1, self._stage_count())
        return self.service.read_ahead.submit(
            self.store.read,
            "assemble/schema_similarity",
            space=self.space,
            embedding=[float(x) for x in embedding],
            fetch=max(4 * count, 20),
            limit=count,
        )

    def _stage_count(self) -> int:
        """Stages of the space, as the density gate counted them (cached counts: only ever
        used to size reads, never to decide what is in the context)."""
        return int((self.report.get("density") or {}).get("stages") or 0)

    def _infer_stage(
        self,
        stages: dict[str, _Stage],
        hits: Sequence[RecallHit],
        similarity: Future[list[dict[str, Any]]] | None,
    ) -> tuple[_Stage | None, dict[str, Any], float]:
        cfg = self.config
        if not stages:
            return None, {"reasoning": "the space has no stages"}, 0.0
        evidence = [h.stage_id for h in hits[: cfg.stage_inference_hits]]
        summary: dict[str, float] = {}
        if similarity is not None:
            summary = {
                r["stage_id"]: 2.0 * float(r["score"]) - 1.0
                for r in similarity.result()
                if r["stage_id"] in stages
            }
        recency = {
            sid: float(s.ordinal) if s.ordinal is not None else _timestamp(s.ended_at)
            for sid, s in stages.items()
        }
        choice = vote_stages(evidence, summary, recency, cfg)
        report: dict[str, Any] = {
            "reasoning": choice.reasoning,
            "score": choice.score,
            "runner_up": choice.runner_up,
            "margin": choice.margin,
            "tie_broken_by_recency": choice.tie_broken_by_recency,
            "fallback": choice.fallback,
            "evidence_hits": len(evidence),
            "summaries_compared": len(summary),
        }
        if self.explain:
            report["scores"] = {k: round(v, 6) for k, v in choice.scores.items()}
            report["summary_similarity"] = {k: round(v, 4) for k, v in summary.items()}
        return (
            (stages.get(choice.stage) if choice.stage else None),
            report,
            stage_confidence(choice, cfg),
        )

    # ------------------------------------------------------------------ phase 1

    def _phase1(self, current: _Stage | None, share: int) -> list[_Item]:
        cfg = self.config
        max_k = MAX_K
        k = max(cfg.max_chunks_per_phase, math.ceil(share / cfg.expected_item_tokens))
        pool = max(1, min(max_k, k * cfg.oversample))
        filters = RecallFilters(
            time_to=self.as_of, stages=(current.id,) if current is not None else None
        )
        resp = self.recaller.recall(
            self.space,
            RecallRequest(
                query=self.request.query,
                k=pool,
                filters=filters,
                include_superseded=self.request.include_superseded or self.as_of is not None,
                touch=False,
                now=self.now,
                preset=_PHASE_PRESET,
                oversample=pool,
                session_novelty=0.0,
            ),
            with_embeddings=True,
        )
        hits = sorted(self._valid(resp.results), key=lambda h: -h.score)  # stable: rank ties
        if not hits:
            return []
        order: list[tuple[RecallHit, dict[str, Any]]]
        if "selection" in self.request.ablate:
            order = [(h, {"rank": n + 1}) for n, h in enumerate(hits)]
        else:
            dims = self.engine.embedder.dimensions
            matrix = np.zeros((len(hits), dims), dtype=np.float64)
            for row, h in enumerate(hits):
                if h.embedding is not None and np.shape(h.embedding) == (dims,):
                    matrix[row] = h.embedding
            picks = mmr_select(
                [h.id for h in hits], [h.score for h in hits], matrix, len(hits), cfg.mmr_lambda
            )
            by_id = {h.id: h for h in hits}
            order = [(by_id[p.id], {"rank": p.rank, "mmr_gain": round(p.gain, 4)}) for p in picks]
        return [self._memory_item(h, detail, with_stage=False) for h, detail in order]

    def _valid(self, hits: Sequence[RecallHit]) -> list[RecallHit]:
        """With ``as_of``: only hits valid then (existing, not yet superseded)."""
        if self.as_of is None or not hits:
            return list(hits)
        rows = self.store.read(
            "assemble/valid_at",
            space=self.space,
            ids=[h.id for h in hits],
            as_of=self.as_of,
            include_superseded=self.request.include_superseded,
        )
        valid = {r["id"] for r in rows}
        return [h for h in hits if h.id in valid]

    def _memory_item(
        self,
        hit: RecallHit,
        detail: dict[str, Any],
        with_stage: bool,
        stage_name: str | None = None,
    ) -> _Item:
        moment = as_utc(to_native(hit.time))
        record = MemoryRecord(
            id=hit.id,
            content=hit.content,
            speaker=hit.speaker or hit.role,
            time=short_time(moment),
            stage=(stage_name or _stage_display(hit.stage_id)) if with_stage else None,
        )
        item = _Item(
            id=hit.id,
            block="",
            tokens=0,
            stage_id=hit.stage_id,
            score=round(float(hit.score), 6),
            detail=detail,
            moment=moment,
        )
        self._render(item, record)
        return item

    def _render(self, item: _Item, record: MemoryRecord) -> None:
        item.record = record
        item.block = render_memory_line(record)
        item.head = record_head(record)
        item.group = record_group(record)
        item.tokens = self.est.count(item.block) + 1  # + the line break between records
        item.group_tokens = self.est.count(item.group) + 1

    def _retime(self, *phases: Sequence[_Item]) -> None:
        """Every memory record's time at ``record_time_precision`` (``auto``: the time of day
        only on dates where the candidates of all phases differ in it), re-rendered before the
        phases are planned, so the token counts the plan uses are final."""
        precision = self.config.record_time_precision
        if precision == "minute":
            return
        items = [i for phase in phases for i in phase if i.record is not None]
        minute_dates = (
            dates_needing_minutes(i.moment for i in items) if precision == "auto" else frozenset()
        )
        for item in items:
            assert item.record is not None
            when = record_time(item.moment, precision, minute_dates)
            if when != item.record.time:
                self._render(item, replace(item.record, time=when))

    # ------------------------------------------------------------------ phase 2

    def _phase2(
        self,
        current: _Stage,
        seeds: Sequence[_Item],
        phase1: Sequence[_Item],
        share: int,
        stages: dict[str, _Stage],
        global_hits: Sequence[RecallHit],
        projection: Future[str | None] | None,
        confidence: float = 1.0,
    ) -> tuple[list[_Item], dict[str, Any]]:
        """Other stages' memories: PPR mass from the Phase-1 entities, fused (weighted RRF)
        with their rank in whole-space recall when ``related_recall_weight`` > 0.  The PPR
        weight is scaled by the current stage's ``confidence`` (``related_ppr_by_confidence``):
        a walk seeded from a stage the query only weakly points at is as uncertain as the
        stage, and at confidence 0 it is not run at all."""
        cfg = self.config
        use_ppr = self._use_ppr()
        ppr_weight = cfg.related_ppr_weight if use_ppr else 0.0
        if cfg.related_ppr_by_confidence and cfg.related_recall_weight > 0:
            ppr_weight *= min(1.0, max(0.0, confidence))
        report: dict[str, Any] = {
            "run": False,
            "ppr": use_ppr and ppr_weight > 0,
            "ppr_weight": round(ppr_weight, 4),
            "seed_memories": len(seeds),
        }
        taken = {i.id for i in phase1}
        k = max(cfg.max_chunks_per_phase, math.ceil(share / cfg.expected_item_tokens))
        hits: dict[str, tuple[RecallHit, dict[str, Any]]] = {}
        ppr_ranking: list[str] = []
        if not use_ppr:
            report["reason"] = "PPR ablated" if "ppr" in self.request.ablate else "PPR weight 0"
        elif ppr_weight <= 0:
            report["reason"] = "stage confidence 0: no walk from a stage the query does not name"
        else:
            ppr_ranking = self._ppr_candidates(current, seeds, taken, k, hits, report, projection)
        recall_ranking = [
            h.id
            for h in global_hits
            if h.stage_id != current.id and h.id not in taken and h.stage_id is not None
        ]
        for h in global_hits:
            if h.id in recall_ranking and h.id not in hits:
                hits[h.id] = (h, {})
        weights = {"ppr": ppr_weight, "recall": cfg.related_recall_weight}
        fused = weighted_rrf(
            {"ppr": ppr_ranking, "recall": recall_ranking}, weights, cfg.related_rank_constant
        )
        report.update(
            run=bool(fused),
            ranking="rrf(ppr, recall)"
            if weights["ppr"] and weights["recall"]
            else ("ppr" if weights["ppr"] else "recall"),
            ppr_candidates=len(ppr_ranking),
            recall_candidates=len(recall_ranking),
        )
        items = []
        for f in fused[: k * cfg.oversample]:
            hit, detail = hits[f.id]
            stage = stages.get(hit.stage_id) if hit.stage_id else None
            if self.explain:
                detail = {**detail, "ranks": dict(f.ranks), "fused": round(f.score, 6)}
            item = self._memory_item(hit, detail, True, stage.label if stage else None)
            item.score = round(f.score, 6)
            items.append(item)
        return items, report

    def _ppr_candidates(
        self,
        current: _Stage,
        seeds: Sequence[_Item],
        taken: set[str],
        k: int,
        hits: dict[str, tuple[RecallHit, dict[str, Any]]],
        report: dict[str, Any],
        projection: Future[str | None] | None,
    ) -> list[str]:
        """Memories of other stages ranked by the PPR mass of their entities (seeded with the
        Phase-1 selection's entities, weighted by how many of those memories mention each)."""
        cfg = self.config
        if not seeds:
            report["reason"] = "no Phase-1 memories to seed from"
            return []
        rows = self.store.read(
            "assemble/memory_entities", space=self.space, ids=[i.id for i in seeds]
        )
        memory_entities = {r["id"]: list(r["keys"]) for r in rows}
        weights = seed_weights_from_memories(memory_entities)
        report["seed_entities"] = len(weights)
        report["memories_without_entities"] = len(memories_without_entities(memory_entities))
        if not weights:
            report["reason"] = "the Phase-1 memories mention no entities"
            return []
        self.clock.lap("phase2_seeds")
        try:
            graph = projection.result() if projection is not None else None
            combined, facts = self.service.entity_pagerank(
                self.space, weights, config=cfg, graph=graph
            )
        except Neo4jError as exc:  # a projection race or GDS refusal: report, do not fail
            report["reason"] = f"PageRank failed: {exc.message or exc}"
            return []
        self.clock.lap("phase2_pagerank")
        report.update(facts)
        if facts["graph"] is None:
            report["reason"] = "the space has no entity graph to walk"
            return []
        mass = top_entities(combined, cfg.ppr_top_entities)
        report["entities"] = len(mass)
        if self.explain:
            report["top_entities"] = {key: round(v, 6) for key, v in list(mass.items())[:20]}
        if not mass:
            report["reason"] = "PageRank gave no entity any mass"
            return []
        rows = self.store.read(
            "assemble/ppr_memories" if self.as_of is None else "assemble/ppr_memories_as_of",
            space=self.space,
            entities=[{"key": key, "mass": m} for key, m in mass.items()],
            exclude_stage=current.id,
            exclude_ids=sorted(taken),
            include_superseded=self.request.include_superseded,
            limit=k * cfg.oversample,
            per_entity=cfg.ppr_memories_per_entity,
            as_of=self.as_of,  # unused by assemble/ppr_memories
        )
        ranking = []
        for r in rows:
            hit = RecallHit(
                id=r["id"],
                content=r["text"] or "",
                score=float(r["score"]),
                session_id=r["session_id"],
                stage_id=r["stage_id"],
                time=to_native(r["event_time"]),
                speaker=r["speaker"],
                role=r["role"],
            )
            detail = {"ppr_mass": round(float(r["score"]), 6)}
            if self.explain:
                detail["via"] = list(r["via"])[:10]
            hits[hit.id] = (hit, detail)
            ranking.append(hit.id)
        return ranking

    # ------------------------------------------------------------------ phase 3

    def _phase3(
        self,
        current: _Stage | None,
        covered: set[str],
        stages: dict[str, _Stage],
        share: int,
        ahead: tuple[list[str], Future[dict[str, dict[str, Any]]]] | None,
    ) -> tuple[list[_Item], dict[str, Any]]:
        """Summaries of the stages not covered yet, nearest in time first; ``ahead``: the
        schemas :meth:`_summaries_ahead` started reading (stage ids, future)."""
        order = self._summary_order(current, covered, stages)
        wanted = self._summaries_wanted(share)
        report: dict[str, Any] = {
            "run": True,
            "uncovered_stages": len(order),
            "covered_stages": sorted(covered),
        }
        if not order or wanted <= 0:
            return [], report
        from pipelines.consolidate.schemas import ensure_schemas

        ahead_schemas: dict[str, dict[str, Any]] = {}
        known: set[str] = set()  # asked for ahead: absent from the answer = the stage went away
        if ahead is not None:
            ahead_ids, future = ahead
            got = future.result()
            ahead_schemas = {sid: got[sid] for sid in ahead_ids if sid in got}
            known = set(ahead_ids)
        items: list[_Item] = []
        empty = 0
        pos = 0
        while len(items) < wanted and pos < len(order):
            # As many stages as summaries still wanted, in one batch (empty ones: another).
            batch = order[pos : pos + wanted - len(items)]
            pos += len(batch)
            missing = [sid for sid in batch if sid not in known]
            schemas = {sid: ahead_schemas[sid] for sid in batch if sid in ahead_schemas}
            if missing:
                schemas.update(ensure_schemas(self.engine, self.space, missing))
            for sid in batch:
                schema = schemas.get(sid)  # None: the stage went away since it was listed
                text = render_schema(schema) if schema else ""
                if not text:
                    empty += 1
                    continue
                stage = stages[sid]
                block = render_summary_block(
                    StageSummaryRecord(stage=stage.label, content=text, time=_span_text(stage))
                )
                items.append(
                    _Item(id=sid, block=block, tokens=self.est.count(block) + 1, stage_id=sid)
                )
        report["summaries_read"] = len(items) + empty
        if empty:
            report["empty_summaries"] = empty
        return items, report

    def _summary_order(
        self, current: _Stage | None, covered: set[str], stages: dict[str, _Stage]
    ) -> list[str]:
        """Stages Phase 3 may summarise (not covered; ended by ``as_of``), nearest first."""
        candidates = [
            s
            for s in stages.values()
            if s.id not in covered
            and (self.as_of is None or (s.ended_at is not None and s.ended_at <= self.as_of))
        ]
        return order_stages_by_distance(
            current.span() if current else None, [s.span() for s in candidates]
        )

    def _summaries_wanted(self, share: int) -> int:
        cfg = self.config
        return min(cfg.max_summaries, max(1, math.ceil(share / cfg.expected_summary_tokens)) + 1)

    def _summaries_ahead(
        self, current: _Stage | None, stages: dict[str, _Stage], share: int, related_minimum: int
    ) -> tuple[list[str], Future[dict[str, dict[str, Any]]]] | None:
        """Start reading (building when stale) the schemas Phase 3 will most likely want:
        the nearest stages, as many as it wants plus as many as Phase 2 may yet cover."""
        from pipelines.consolidate.schemas import ensure_schemas

        covered = {current.id} if current else set()
        order = self._summary_order(current, covered, stages)
        ids = order[: self._summaries_wanted(share) + max(related_minimum, 1)]
        if not ids:
            return None
        return ids, self.service.read_ahead.submit(ensure_schemas, self.engine, self.space, ids)

    def _use_ppr(self) -> bool:
        return "ppr" not in self.request.ablate and self.config.related_ppr_weight > 0

    # ------------------------------------------------------------------ flat mode

    def _flat_layout(self) -> tuple[list[str], str, Any, int, int]:
        """Flat mode's slot keys, template, prompt budget, section budget and the room its
        records have (the section budget less the header)."""
        keys = [_SLOT_OF[FLAT_SECTION]]
        template, budget = self._template(keys)
        section_budget = self._section_budget(budget.content_budget)
        header_tokens = max(
            self.est.count(f"{_FLAT_HEADER}\n{_FLAT_EMPTY}"),
            self.est.count(f"{_FLAT_HEADER}\n<{RECORDS_TAG}>\n</{RECORDS_TAG}>"),
        )
        return keys, template, budget, section_budget, max(0, section_budget - header_tokens)

    def _flat_k(self, room: int | None = None) -> int:
        """How many memories flat mode recalls: ``flat_pool_factor`` times what its ``room``
        (default: from :meth:`_flat_layout`) holds at the expected item size, at most
        recall's max_k."""
        cfg = self.config
        room = self._flat_layout()[4] if room is None else room
        wanted = max(
            cfg.max_chunks_per_phase,
            math.ceil(room / cfg.expected_item_tokens * cfg.flat_pool_factor),
        )
        return min(MAX_K, wanted)

    def _flat(self, recalled: _SpaceRecall | None = None) -> ContextResponse:
        """Whole-space recall packed first-fit into the budget. ``recalled`` is a whole-space
        recall already made (by staged mode before a gate chose flat mode); it is used when
        it was made with flat mode's k, which makes it the very recall flat mode would make."""
        cfg = self.config
        keys, template, budget, section_budget, room = self._flat_layout()
        k = self._flat_k(room)
        reused = recalled is not None and recalled.k == k
        if recalled is None or not reused:
            recalled = self._space_recall(k)
        hits, intent = recalled.hits, recalled.intent
        self.clock.lap("recall")
        items = [
            self._memory_item(h, {"rank": n + 1}, cfg.flat_stage_provenance, None)
            for n, h in enumerate(hits)
        ]
        self._retime(items)
        packed = pack_to_budget(
            [(n, i.tokens) for n, i in enumerate(items)],
            room,
            [(i.group, i.group_tokens) for i in items],
        )

        def records_of(chosen: Sequence[int]) -> list[_Item]:
            return self._display_order([items[n] for n in sorted(chosen)])

        def text_of(chosen: Sequence[int]) -> str:
            if not chosen:
                return f"{_FLAT_HEADER}\n{_FLAT_EMPTY}"
            return "\n".join([_FLAT_HEADER, _records_text(records_of(chosen))])

        # The packing adds up per-record estimates, each rounded up; the section as rendered
        # counts less, and what it leaves takes further candidates in rank order.
        chosen = top_up(
            len(items),
            packed.kept,
            lambda picked: self.est.count(text_of(picked)) <= section_budget,
        )
        kept = _grouped(records_of(chosen))
        text = text_of(chosen)
        slot = Slot(keys[0], text, cfg.section_priorities[0], "memory_blocks")
        result = self._decompose(template, [slot])
        self.clock.lap("decompose")
        phase_reports = {
            FLAT_SECTION: {
                "candidates": len(items),
                "selected": len(kept),
                "dropped": len(items) - len(kept),
                "intent": intent,
                "recall": "reused whole-space recall" if reused else "recalled",
                "recall_k": k,
                **(
                    {"items": [{"id": i.id, "tokens": i.tokens, "score": i.score} for i in kept]}
                    if self.explain
                    else {}
                ),
            }
        }
        return self._respond(
            result,
            {FLAT_SECTION: keys[0]},
            {FLAT_SECTION: kept},
            phase_reports,
            budget_report=self._budget_report(budget, section_budget),
        )

    # ------------------------------------------------------------------ prompt

    def _template(self, context_keys: list[str]) -> tuple[str, Any]:
        leading = [s.key for s in self.caller_slots]
        template = build_template(leading, context_keys, QUERY_SLOT, "Query", DATA_NOTICE)
        budget = prompt_budget(
            template,
            [*leading, *context_keys, QUERY_SLOT],
            self.request.context_window,
            self.config.headroom,
            self.est,
            self.config,
        )
        return template, budget

    def _section_budget(self, content_budget: int) -> int:
        """Tokens for the context sections: the content budget minus the query and the
        caller's slots (in full when at least as important as the current-stage section, else
        at most their minimum share, which the decomposer grants them anyway)."""
        cfg = self.config
        top = min(cfg.section_priorities)
        reserved = self.est.count(self.request.query)
        for slot in self.caller_slots:
            tokens = self.est.count(slot.content)
            reserved += tokens if slot.priority <= top else min(tokens, cfg.min_share)
        return max(0, content_budget - reserved)

    def _decompose(self, template: str, context_slots: list[Slot]) -> DecomposedPrompt:
        cfg = self.config
        slots = [Slot(s.key, s.content, s.priority, s.condenser) for s in self.caller_slots]
        slots.extend(context_slots)
        slots.append(Slot(QUERY_SLOT, self.request.query, cfg.query_priority, "user_message"))
        return decompose(template, slots, self.request.context_window, cfg.headroom, self.est, cfg)

    def _budget_report(self, budget: Any, section_budget: int) -> dict[str, Any]:
        return {
            "context_window": self.request.context_window,
            "headroom": self.config.headroom,
            "ceiling": budget.ceiling,
            "shell_tokens": budget.shell_tokens,
            "budget": budget.budget,
            "limit": budget.limit,
            "content_budget": budget.content_budget,
            "section_budget": section_budget,
            "split": list(self.config.split),
        }

    def _section_text(self, kind: SectionKind, items: Sequence[_Item], label: str | None) -> str:
        header = f"{kind.header}: {label}" if label else None
        if kind is SectionKind.STAGE_SUMMARIES:
            text = render_summary_section([], notice=None, header=header)
        else:
            text = render_memory_section(kind, [], notice=None, header=header)
        if not items:
            return text
        head = text.split("\n", 1)[0]
        if kind is SectionKind.STAGE_SUMMARIES:
            return "\n".join([head, BLOCK_SEPARATOR.join(i.block for i in items)])
        return "\n".join([head, _records_text(items)])

    def _respond(
        self,
        result: DecomposedPrompt,
        slot_of: dict[str, str],
        items_by_section: dict[str, list[_Item]],
        phase_reports: dict[str, Any],
        budget_report: dict[str, Any],
    ) -> ContextResponse:
        sections = {key: "" for key in SECTION_KEYS}
        included: dict[str, list[str]] = {key: [] for key in SECTION_KEYS}
        tokens: dict[str, int] = {}
        for section, slot_key in slot_of.items():
            content = result.slot(slot_key).content
            sections[section] = content
            tokens[section] = result.slot(slot_key).final_tokens
            openings = (
                [b.opening for b in parse_blocks(content)]
                if section == "stage_summaries"
                else [r.head for r in parse_records(content)]
            )
            present = _surviving(items_by_section.get(section, []), openings)
            if section == "stage_summaries":
                included[section] = []
                phase_reports[section]["included_stages"] = [i.id for i in present]
            else:
                included[section] = [i.id for i in present]
            phase_reports[section]["included"] = len(present)
        for slot in self.caller_slots:
            tokens[slot.key] = result.slot(slot.key).final_tokens
        if FLAT_SECTION not in slot_of:  # a section left out of the prompt has no tokens
            for section in SECTION_KEYS:
                tokens.setdefault(section, 0)
        tokens["query"] = result.slot(QUERY_SLOT).final_tokens
        tokens["prompt"] = result.prompt_tokens
        self.report.update(
            total_tokens=result.prompt_tokens,
            tokens=tokens,
            budget={**budget_report, "fits": result.fits},
            phases=phase_reports,
            slots=[
                {
                    "key": s.key,
                    "priority": s.priority,
                    "original_tokens": s.original_tokens,
                    "input_tokens": s.input_tokens,
                    "final_tokens": s.final_tokens,
                    "retention": round(s.retention, 4),
                    "share": s.share,
                    "condenser": s.condenser,
                }
                for s in result.slots
            ],
            retention={s.key: round(s.retention, 4) for s in result.slots},
            condensers={s.key: s.condenser for s in result.slots if s.condenser is not None},
            warning=result.warning,
            fast_path=result.fast_path,
            safety_iterations=result.safety_iterations,
        )
        self.report["timings_ms"] = self.clock.total()
        return ContextResponse(
            sections=sections, prompt=result.prompt, report=self.report, included_ids=included
        )


def _stage_display(stage_id: str | None) -> str | None:
    """A stage's display name from its id (``label:trip`` -> ``trip``), as ingest names it."""
    if stage_id is None:
        return None
    return _one_line(stage_id.split(":", 1)[1] if ":" in stage_id else stage_id)


def _span_text(stage: _Stage) -> str | None:
    start, end = short_time(stage.started_at), short_time(stage.ended_at)
    if start is None:
        return None
    if end is None or end == start:
        return start
    return f"{start} – {end}"

"""Stage-aware, token-budgeted context assembly: the ``/context`` service.

Given a query and the reader model's window, :class:`Assembler` returns a prompt whose context
is structured by scope and fits the budget, plus a typed report of every decision
(:mod:`pipelines.assemble.report`). An assembly is a preset of steps
(:mod:`pipelines.assemble.presets`, read top to bottom) run over one state
(:mod:`pipelines.assemble.state`): the request validated when it is built, the space's
``settings.assembly`` and the preset's overlay over the configuration, then the steps.

Latency: reads that need nothing from the step before them run on the caller's ``read_ahead``
executor beside the recalls (the stage list, the projection check, the summary similarity, the
facts, and Phase 3's schemas for the nearest stages while Phases 1-2 run); the results are the
same as reading them in turn.

Validity: superseded memories are left out unless ``include_superseded``; ``as_of`` (valid
time) assembles the context as it was true then (memories with ``event_time <= as_of`` whose
supersessions had not become true by then, stages started by then, summaries only of stages that
had ended by then); ``known_at`` (recorded time) keeps only what the server knew then (memories
stored by then, supersessions recorded by then; stages and summaries are not filtered by it).

Context assembly as configuration: a preset *is* the ordered list of assembly steps, each
with its parameters, plus a configuration overlay. The runner
(:func:`~pipelines.assemble.state.run_steps`) runs them in this order; a step runs only in
the modes it names, and every assembly starts staged until a gate chooses flat mode.

``auto`` (what every API request runs), top to bottom:

* ``stage`` — the stage the caller names (``stage``, else its ``session``; 404 if unknown);
* ``mode`` — the density gate: small or sparse corpora get flat mode;
* ``budget_gate`` — staged: the sections' layout; no inferred stage for a small budget;
* ``reads_ahead`` — staged: the stage list, the projection check, the summary similarity;
* ``facts_ahead`` — the facts read beside the recalls;
* ``space_recall`` — staged: whole-space recall (stage votes, Phase 2's ranking, and flat
  mode's recall when the confidence gate may still choose it);
* ``current_stage`` — staged: named, or inferred by rank votes (the confidence gate may
  choose flat mode), with the split, shares and minimum counts it earns;
* ``summaries_ahead`` — staged: the schemas Phase 3 will most likely want;
* ``own_stage`` — staged: Phase 1, the stage's memories in greedy MMR order;
* ``related`` — staged: Phase 2, other stages' memories by PageRank fused with recall;
* ``summaries`` — staged: Phase 3, summaries of the stages not covered;
* ``flat_recall`` — flat: whole-space recall (the staged one when it serves);
* ``flat_summaries`` — flat: stage summaries for a question that asks for a summary;
* ``facts`` — the facts read ahead;
* ``pack`` / ``pack_flat`` — the sections packed into the budget (staged / flat);
* ``render`` — the decomposer (priorities, condensers, truncation banner), read back;
* ``report`` — the typed report and the response.

``flat`` is ``auto`` with flat mode forced (the benchmark's baseline of the assembler's own
rendering). The benchmark's ablations are presets built here from the same steps
(``benchmarks/context_bench.py``); the API offers none of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, model_validator

from pipelines import spaces
from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG, AssemblyConfig
from pipelines.assemble.related import WalkFacts, entity_pagerank
from pipelines.assemble.report import ContextResponse
from pipelines.assemble.request import Clock, ContextRequest, DensityCache, Run, TemplateSlot
from pipelines.assemble.state import AssemblyState, AssemblyStep, run_steps
from pipelines.assemble.steps import (
    BudgetGate,
    CurrentStage,
    Facts,
    FactsAhead,
    FlatRecall,
    FlatSummaries,
    ModeGate,
    NamedStage,
    OwnStage,
    PackFlat,
    PackStaged,
    ReadsAhead,
    RelatedPrior,
    Render,
    Report,
    SpaceRecallStep,
    StageSummaries,
    SummariesAhead,
)
from pipelines.engine import Engine
from pipelines.graph import Row, as_utc
from pipelines.models.memo import MemoEmbedder
from pipelines.overrides import merge_overrides
from pipelines.prompt.tokens import CharsPerToken, TokenEstimator
from pipelines.recall.config import DEFAULT_RECALL_CONFIG, RecallConfig
from pipelines.recall.service import Recaller
from pipelines.tracing import span

__all__ = [
    "AUTO",
    "FLAT",
    "Assembler",
    "AssemblyPreset",
    "ContextRequest",
    "ContextResponse",
    "TemplateSlot",
]


#: Every preset has these steps.
ESSENTIAL_STEPS = ("stage", "mode", "render", "report")


class AssemblyPreset(BaseModel):
    """A named, ordered list of assembly steps and a configuration overlay (fields of
    :class:`~pipelines.assemble.config.AssemblyConfig`, applied over the space's settings).
    ``ablates`` names what the preset leaves out (``report.ablate``). Frozen; derive variants
    with :meth:`without` and :meth:`replacing`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    steps: tuple[SerializeAsAny[AssemblyStep], ...]
    overlay: dict[str, Any] = Field(default_factory=dict)
    ablates: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _check(self) -> AssemblyPreset:
        kinds = [s.kind for s in self.steps]
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"steps must be unique, got {kinds}")
        missing = [k for k in ESSENTIAL_STEPS if k not in kinds]
        if missing:
            raise ValueError(f"a preset needs the steps {missing}")
        return self

    def has(self, kind: str) -> bool:
        return any(s.kind == kind for s in self.steps)

    def variant(self, name: str, description: str, **changes: Any) -> AssemblyPreset:
        """This preset renamed, with ``changes`` (``steps``, ``overlay``, ``ablates``)."""
        fields = {**self.__dict__, "name": name, "description": description, **changes}
        return AssemblyPreset.model_validate(fields)

    def without(self, *kinds: str, name: str, description: str, **changes: Any) -> AssemblyPreset:
        """This preset without the steps ``kinds`` (and ``changes``, see :meth:`variant`)."""
        steps = tuple(s for s in self.steps if s.kind not in kinds)
        return self.variant(name, description, steps=steps, **changes)

    def replacing(
        self, *steps: AssemblyStep, name: str, description: str, **changes: Any
    ) -> AssemblyPreset:
        """This preset with each of ``steps`` in place of its step of the same kind (and
        ``changes``, see :meth:`variant`)."""
        new = {s.kind: s for s in steps}
        unknown = set(new) - {s.kind for s in self.steps}
        if unknown:
            raise ValueError(f"no step {sorted(unknown)} to replace")
        replaced = tuple(new.get(s.kind, s) for s in self.steps)
        return self.variant(name, description, steps=replaced, **changes)


AUTO = AssemblyPreset(
    name="auto",
    description="Staged or flat as the gates decide (density, budget, confidence); every phase.",
    steps=(
        NamedStage(),
        ModeGate(),
        BudgetGate(),
        ReadsAhead(),
        FactsAhead(),
        SpaceRecallStep(),
        CurrentStage(),
        SummariesAhead(),
        OwnStage(),
        RelatedPrior(),
        StageSummaries(),
        FlatRecall(),
        FlatSummaries(),
        Facts(),
        PackStaged(),
        PackFlat(),
        Render(),
        Report(),
    ),
)


FLAT = AUTO.replacing(
    ModeGate(flat=True),
    name="flat",
    description="Flat mode whatever the counts: whole-space recall packed into one section.",
)


class Assembler:
    """Context-assembly service; thread-safe.  Holds the configuration, its own Recaller
    (which embeds through the query memo), and the density counts cache.

    ``read_ahead`` runs the reads an assembly issues ahead of the step that needs them; the
    caller owns it and shuts it down (it is never shut down here); ``recall_executor`` is
    the Recaller's, for the round trips recall sends ahead."""

    def __init__(
        self,
        engine: Engine,
        *,
        read_ahead: Executor,
        config: AssemblyConfig = DEFAULT_ASSEMBLY_CONFIG,
        recall_config: RecallConfig | None = None,
        estimator: TokenEstimator | None = None,
        recall_executor: Executor | None = None,
    ) -> None:
        self.engine = engine
        self.config = config
        self.read_ahead = read_ahead
        self.embedder = MemoEmbedder(engine.embedder)
        self.recaller = Recaller(
            engine,
            recall_config or DEFAULT_RECALL_CONFIG,
            embedder=self.embedder,
            executor=recall_executor,
        )
        self.estimator = estimator
        self.density = DensityCache()

    def assemble(
        self, space: str, request: ContextRequest, preset: AssemblyPreset = AUTO
    ) -> ContextResponse:
        """The context for ``request`` in ``space`` (404 for an unknown space or a stage or
        session it does not have), by the steps of ``preset`` (the API's: ``auto``)."""
        with span("assemble", **{"mnemograph.space": space}):
            clock = Clock()
            try:
                state = AssemblyState(self._run(space, request, preset, clock), preset.ablates)
                run_steps(preset.steps, state)
                assert state.response is not None, "the preset has a report step"
                return state.response
            finally:
                clock.spans.close("failed")  # ended already unless a step raised

    def _run(
        self, space: str, request: ContextRequest, preset: AssemblyPreset, clock: Clock
    ) -> Run:
        """One assembly's inputs: the space's configuration and the request's times."""
        config = self.config_for(spaces.get(self.engine.store, space), request, preset)
        as_of, known_at = as_utc(request.as_of), as_utc(request.known_at)
        return Run(
            space=space,
            request=request,
            config=config,
            est=self.estimator or CharsPerToken(config.chars_per_token),
            as_of=as_of,
            known_at=known_at,
            now=as_utc(request.now) or as_of or known_at,
            clock=clock,
            engine=self.engine,
            recaller=self.recaller,
            embedder=self.embedder,
            read_ahead=self.read_ahead,
            density=self.density,
        )

    def config_for(
        self,
        space_data: Mapping[str, Any],
        request: ContextRequest,
        preset: AssemblyPreset = AUTO,
    ) -> AssemblyConfig:
        """The service's configuration with the space's ``settings.assembly`` overrides, the
        preset's overlay, and the request's ``headroom`` and ``split`` (validated by the
        request already)."""
        overrides = (space_data.get("settings") or {}).get("assembly")
        config = merge_overrides(self.config, overrides, "settings.assembly")
        config = merge_overrides(config, preset.overlay or None, f"preset {preset.name}")
        return config.model_copy(update={"headroom": request.headroom, "split": request.split})

    def density_counts(
        self, space: str, statuses: Sequence[str], as_of: datetime | None, ttl_s: float
    ) -> Row:
        """The memory and stage counts the density gate reads, cached for ``ttl_s`` seconds
        (not with ``as_of``)."""
        return self.density.counts(self.engine.store, space, statuses, as_of, ttl_s)

    def entity_pagerank(
        self, space: str, seed_weights: Mapping[str, float], config: AssemblyConfig | None = None
    ) -> tuple[dict[str, float], WalkFacts]:
        """Personalized PageRank over the space's entity graph from weighted seeds
        (:func:`~pipelines.assemble.pagerank.entity_pagerank`)."""
        return entity_pagerank(
            self.engine, self.read_ahead, space, seed_weights, config or self.config
        )

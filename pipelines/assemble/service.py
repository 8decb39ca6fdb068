"""Stage-aware, token-budgeted context assembly: the ``/context`` service.

Given a query and the reader model's window, :class:`Assembler` returns a prompt whose context
is structured by scope and fits the budget, plus a typed report of every decision
(:mod:`pipelines.assemble.report`).  One assembly, top to bottom:

1. **Request** (:mod:`~pipelines.assemble.request`): validated when it is built; the space
   must exist (404) and its ``settings.assembly`` override the configuration.
2. **Mode** (:mod:`~pipelines.assemble.mode`): the stage the caller names (``stage``, else its
   ``session``; :mod:`~pipelines.assemble.stage`), then the density gate: small or sparse
   corpora get flat recall.
3. **Current stage**: named, or inferred from the query by rank votes of whole-space recall and
   of the stage summaries, trusted in proportion to its vote margin (the current stage's
   budget share scales with that confidence; the rest goes to related context).  The budget
   gate (no inferred stage for a small budget) and the confidence gate (no stage stands out)
   choose flat mode instead, and say why.
4. **Phase 1** (:func:`~pipelines.assemble.recalls.own_stage`): the stage's memories,
   oversampled, in greedy MMR order.
5. **Phase 2** (:mod:`~pipelines.assemble.related`): Personalized PageRank from the Phase-1
   entities across stages, fused with whole-space recall.
6. **Phase 3** (:mod:`~pipelines.assemble.summaries`): schema summaries of the stages not
   covered yet, nearest in time first.
7. **Pack** (:mod:`~pipelines.assemble.packing`): minimum counts, then each phase's share of
   the budget (60/30/10 by default), then what is left, most important phase first.  The
   facts (:mod:`~pipelines.assemble.staged_facts`) take up to ``facts_share`` of the sections'
   budget first, for the turns the packed phases leave out.
8. **Render and decompose** (:mod:`~pipelines.assemble.render`): escaped, delimited record
   blocks with provenance; the caller's slots, the sections (the facts first) and the query
   through the decomposer (priorities, condensers, safety loop, truncation banner).

Flat mode (:mod:`~pipelines.assemble.flat`) packs whole-space recall into one section, with
the facts in one before it.

Latency: reads that need nothing from the step before them run on the caller's ``read_ahead``
executor beside the recalls (the stage list, the projection check, the summary similarity, the
facts, and Phase 3's schemas for the nearest stages while Phases 1-2 run); the results are the
same as reading them in turn.

Validity: superseded memories are left out unless ``include_superseded``; ``as_of`` (valid
time) assembles the context as it was true then (memories with ``event_time <= as_of`` whose
supersessions had not become true by then, stages started by then, summaries only of stages that
had ended by then); ``known_at`` (recorded time) keeps only what the server knew then (memories
stored by then, supersessions recorded by then; stages and summaries are not filtered by it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from pipelines import maintenance, spaces
from pipelines.assemble.budget import split_budget
from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG, AssemblyConfig
from pipelines.assemble.facts import Fact, facts_phase, start_facts
from pipelines.assemble.flat import (
    SUMMARIES_SECTION,
    flat_context,
    flat_k,
    flat_layout,
    flat_recall,
)
from pipelines.assemble.items import Item, Stage, retime
from pipelines.assemble.memo import MemoEmbedder
from pipelines.assemble.mode import (
    DensityCache,
    ModeChoice,
    budget_gate,
    choose_mode,
    confidence_gate,
)
from pipelines.assemble.packing import minimum_count, seed_count
from pipelines.assemble.pagerank import WalkFacts, entity_pagerank
from pipelines.assemble.plan import confident_split
from pipelines.assemble.recalls import SpaceRecall, own_stage, phase_k, space_recall
from pipelines.assemble.related import Related, related_prior, use_ppr
from pipelines.assemble.render import (
    SLOT_OF,
    Layout,
    budget_report,
    layout,
    read_back,
)
from pipelines.assemble.report import (
    PhasesReport,
    RelatedFacts,
    StageReport,
    StageVote,
    SummariesFacts,
    SummariesPhase,
)
from pipelines.assemble.request import (
    FACTS_SECTION,
    FLAT_SECTION,
    PRODUCT,
    SECTION_KEYS,
    ContextRequest,
    Experiment,
    TemplateSlot,
)
from pipelines.assemble.respond import (
    ContextResponse,
    assembly_report,
    response,
    staged_budget,
    staged_phases,
)
from pipelines.assemble.run import Clock, Run
from pipelines.assemble.stage import (
    infer_current_stage,
    named_stage,
    read_stages,
    stage_report,
    summary_similarity_ahead,
)
from pipelines.assemble.staged_facts import pack_staged, render_staged
from pipelines.assemble.summaries import (
    Ahead,
    stage_summaries,
    summaries_ahead,
    whole_history_summaries,
)
from pipelines.assemble.tokens import CharsPerToken, TokenEstimator
from pipelines.engine import Engine
from pipelines.graph import Row, as_utc
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG, RecallConfig
from pipelines.recall.intent import Intent
from pipelines.recall.request import MAX_K
from pipelines.recall.service import Recaller
from pipelines.tracing import span

__all__ = ["Assembler", "ContextRequest", "ContextResponse", "Experiment", "TemplateSlot"]


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
        self, space: str, request: ContextRequest, experiment: Experiment = PRODUCT
    ) -> ContextResponse:
        """The context for ``request`` in ``space`` (404 for an unknown space or a stage or
        session it does not have).  ``experiment``: benchmark-only switches."""
        with span("assemble", **{"mnemograph.space": space}):
            clock = Clock()
            try:
                return self._assemble(space, request, experiment, clock)
            finally:
                clock.spans.close("failed")  # ended already unless a step raised

    def _assemble(
        self, space: str, request: ContextRequest, experiment: Experiment, clock: Clock
    ) -> ContextResponse:
        space_data = spaces.get(self.engine.store, space)
        config = self.config_for(space_data, request)
        as_of, known_at = as_utc(request.as_of), as_utc(request.known_at)
        run = Run(
            space=space,
            request=request,
            experiment=experiment,
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
        )
        return _assemble(run, self.density)

    def config_for(self, space_data: Mapping[str, Any], request: ContextRequest) -> AssemblyConfig:
        """The service's configuration with the space's ``settings.assembly`` overrides and
        the request's ``headroom`` and ``split`` (validated by the request already)."""
        overrides = (space_data.get("settings") or {}).get("assembly")
        config = merge_overrides(self.config, overrides, "settings.assembly")
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


# ----------------------------------------------------------------------------- one assembly


def _assemble(run: Run, density: DensityCache) -> ContextResponse:
    named, how = named_stage(run)
    run.clock.lap("stage_lookup")
    mode = choose_mode(run, density)
    run.clock.lap("density")
    if mode.mode == "flat":
        unused = None
        if named is not None:
            unused = stage_report(named, str(how), False, "flat mode: the stage is not used")
        return _flat(run, mode, unused)
    return _staged(run, mode, named, how)


@dataclass(frozen=True)
class _Reads:
    """Reads started ahead, beside whole-space recall."""

    stages: Future[list[Row]]
    projection: Future[str | None] | None
    similarity: Future[list[Row]] | None
    facts: Future[list[Fact]] | None


@dataclass(frozen=True)
class _Scope:
    """The current stage and what it scopes: its confidence, the budget split it earned, each
    phase's share and minimum count, the space's stages, whole-space recall, and the reads
    still running (the projection check, the facts)."""

    current: Stage | None
    report: StageReport
    confidence: float
    split: tuple[float, float, float]
    shares: tuple[int, int, int]
    minimums: tuple[int, int, int]
    stages: dict[str, Stage]
    recalled: SpaceRecall | None
    projection: Future[str | None] | None
    facts: Future[list[Fact]] | None


def _staged(run: Run, mode: ModeChoice, named: Stage | None, how: str | None) -> ContextResponse:
    """Staged mode: the current stage, its three phases, packed and rendered; a gate may
    still choose flat mode."""
    lay = layout(run, [SLOT_OF[k] for k in SECTION_KEYS])
    if named is None and (why := budget_gate(run.config, lay.section_budget)) is not None:
        unused = stage_report(
            None,
            "none",
            False,
            "not inferred: the sections' budget is below inferred_stage_min_tokens",
        )
        return _flat(run, replace(mode, mode="flat", reason=why), unused)
    scope = _current_stage(run, mode, lay, named, how)
    if isinstance(scope, ContextResponse):
        return scope
    current, shares, minimums = scope.current, scope.shares, scope.minimums
    ahead = None
    if not run.ablated("summaries"):
        ahead = summaries_ahead(run, current, scope.stages, shares[2], minimums[1])
    phase1 = own_stage(run, current, shares[0])
    run.clock.lap("phase1")
    related = _phase2(run, scope, phase1)
    run.clock.lap("phase2")
    retime(run.config.record_time_precision, run.est, phase1, related.items)
    phase3, facts3 = _phase3(run, scope, related, ahead)
    run.clock.lap("phase3")
    label = current.label if current else None
    time_order = scope.recalled.time_order if scope.recalled else False
    phases = [phase1, related.items, phase3]
    facts = scope.facts.result() if scope.facts is not None else []
    run.clock.lap("facts")
    pack = pack_staged(run, lay, phases, label, scope.split, minimums, time_order, facts)
    result, back = render_staged(run, pack)
    found = (related.facts, facts3)
    reports = staged_phases(run, phases, pack.packed, back, minimums, shares, found)
    if facts:
        shown = back.present.get(FACTS_SECTION, [])
        reports.facts = facts_phase(run, facts, pack.facts, pack.sources, pack.share, shown)
    budget = staged_budget(run, pack.layout, result, scope.split, pack.packed)
    report = assembly_report(run, mode, scope.report, result, back, budget, reports)
    return response(result, back, report, pack.sources)


def _current_stage(
    run: Run, mode: ModeChoice, lay: Layout, named: Stage | None, how: str | None
) -> _Scope | ContextResponse:
    """The named stage, or the one inferred from the query (a flat context when the
    confidence gate refuses it), with the split and shares it earns."""
    cfg = run.config
    reads = _start_reads(run, named, mode.stage_count)
    most = split_budget(lay.section_budget, confident_split(cfg.split, 0.0))
    # When the confidence gate may yet choose flat mode, whole-space recall is sized for
    # it, so a gated call recalls once rather than twice.
    may_go_flat = named is None and cfg.flat_below_confidence is not None
    k = _space_k(run, most[1], flat_k(run) if may_go_flat else 0)
    need_space = named is None or cfg.related_recall_weight > 0
    recalled = space_recall(run, k) if need_space and mode.stage_count > 0 else None
    stages = read_stages(reads.stages.result())
    run.clock.lap("global_recall")
    vote: StageVote | None = None
    if named is None:
        inference = infer_current_stage(
            run, stages, recalled.hits if recalled else [], reads.similarity
        )
        run.clock.lap("stage_inference")
        current, reasoning, vote = inference.stage, inference.reasoning, inference.vote
        confidence = inference.confidence
        if (why := confidence_gate(cfg, inference)) is not None:
            how = "inferred" if current else "none"
            unused = stage_report(current, how, False, reasoning, vote, confidence)
            flat = replace(mode, mode="flat", reason=why)
            return _flat(run, flat, unused, recalled, reads.facts)
    else:
        current, reasoning, confidence = named, f"named by the caller ({how})", 1.0
        stages.setdefault(named.id, named)
    split = confident_split(cfg.split, confidence)
    shares = split_budget(lay.section_budget, split)
    minimums = (minimum_count(cfg, shares[0]), minimum_count(cfg, shares[1]), 0)
    how = how or ("inferred" if current else "none")
    report = stage_report(current, how, current is not None, reasoning, vote, confidence)
    return _Scope(
        current,
        report,
        confidence,
        split,
        shares,
        minimums,
        stages,
        recalled,
        reads.projection,
        reads.facts,
    )


def _start_reads(run: Run, named: Stage | None, stage_count: int) -> _Reads:
    """Start the reads that need nothing from the steps before them."""
    stages = run.read_ahead.submit(
        run.store.read, "assemble/stages", space=run.space, as_of=run.as_of
    )
    projection: Future[str | None] | None = None
    if use_ppr(run):
        projection = run.read_ahead.submit(
            maintenance.ensure_entity_projection, run.engine, run.space
        )
    similarity = None
    if named is None and run.config.stage_vote_weight_summaries > 0:
        similarity = summary_similarity_ahead(run, stage_count)
    return _Reads(stages, projection, similarity, start_facts(run))


def _space_k(run: Run, related_share: int, at_least: int) -> int:
    """k of whole-space recall in staged mode: enough hits to vote for the current stage and
    to rank twice what Phase 2's share holds, and ``at_least`` (flat mode's k when a gate may
    still choose flat mode, so that recall serves both)."""
    wanted = max(run.config.stage_inference_hits, 2 * phase_k(run, related_share), at_least)
    return min(MAX_K, wanted)


def _phase2(run: Run, scope: _Scope, phase1: list[Item]) -> Related:
    """Phase 2 from the part of Phase 1 its share holds (none without a current stage)."""
    if scope.current is None:
        return Related(RelatedFacts(run=False, reason="no current stage"))
    seeds = phase1[: seed_count(phase1, scope.shares[0], scope.minimums[0])]
    return related_prior(
        run,
        scope.current,
        seeds,
        phase1,
        scope.shares[1],
        scope.stages,
        scope.recalled.hits if scope.recalled else [],
        scope.projection,
        scope.confidence,
    )


def _phase3(
    run: Run, scope: _Scope, related: Related, ahead: Ahead | None
) -> tuple[list[Item], SummariesFacts]:
    """Phase 3 for the stages neither the current stage nor Phase 2's head covers."""
    if run.ablated("summaries"):
        return [], SummariesFacts(run=False, reason="ablated")
    covered = {scope.current.id} if scope.current else set()
    head = related.items[: max(scope.minimums[1], 1)]
    covered |= {i.stage_id for i in head if i.stage_id is not None}
    return stage_summaries(run, scope.current, covered, scope.stages, scope.shares[2], ahead)


# ----------------------------------------------------------------------------- flat mode


def _flat_summaries(run: Run, intent: str) -> tuple[list[Item], SummariesPhase | None]:
    """Stage summaries for a flat context whose query asks for a summary, and Phase 3's
    report without its ``included`` counts (None: not such a query, or summaries ablated or
    switched off)."""
    if (
        intent != str(Intent.SUMMARIZATION)
        or run.config.flat_summaries_share <= 0.0
        or run.ablated("summaries")
    ):
        return [], None
    room = flat_layout(run).section_budget
    share = int(room * run.config.flat_summaries_share)
    stages = read_stages(run.store.read("assemble/stages", space=run.space, as_of=run.as_of))
    floor = int(room * run.config.flat_summary_floor)
    items, dropped, facts = whole_history_summaries(run, stages, share, floor)
    run.clock.lap("summaries")
    phase = SummariesPhase(
        **dict(facts),
        selected=len(items),
        dropped=dropped,
        minimum=0,
        share_tokens=share if sum(i.tokens for i in items) <= share else floor,
        included=0,
        included_stages=[],
    )
    return items, phase


def _flat(
    run: Run,
    mode: ModeChoice,
    stage: StageReport | None,
    recalled: SpaceRecall | None = None,
    reading: Future[list[Fact]] | None = None,
) -> ContextResponse:
    """Flat mode (``mode`` says why), from ``recalled`` when a gate made that whole-space
    recall with flat mode's k, and from the facts ``reading`` when staged mode started it;
    with stage summaries when the query asks for a summary."""
    if reading is None:  # the facts read beside the recall
        reading = start_facts(run)
    recalled, reused = flat_recall(run, recalled)
    summaries, summaries_phase = _flat_summaries(run, recalled.intent)
    facts = reading.result() if reading is not None else []
    run.clock.lap("facts")
    flat = flat_context(run, recalled, reused, summaries, facts)
    sections = (FACTS_SECTION,) * bool(flat.facts) + (FLAT_SECTION, SUMMARIES_SECTION)
    slot_of = dict(zip(sections, flat.layout.keys, strict=False))
    back = read_back(
        run,
        flat.result,
        slot_of,
        {FLAT_SECTION: flat.kept, SUMMARIES_SECTION: summaries, FACTS_SECTION: flat.facts},
    )
    flat.phase.included = len(back.present[FLAT_SECTION])
    budget = budget_report(run, flat.layout, flat.result)
    phases = PhasesReport(recalled=flat.phase)
    if summaries_phase is not None:
        shown = back.present.get(SUMMARIES_SECTION, [])
        summaries_phase.included = len(shown)
        summaries_phase.included_stages = [i.id for i in shown]
        phases.stage_summaries = summaries_phase
    if facts:
        shown = back.present.get(FACTS_SECTION, [])
        phases.facts = facts_phase(
            run, facts, flat.facts, flat.fact_sources, flat.facts_share, shown
        )
    report = assembly_report(run, mode, stage, flat.result, back, budget, phases)
    return response(flat.result, back, report, flat.fact_sources)

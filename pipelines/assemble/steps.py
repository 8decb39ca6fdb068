"""The steps of context assembly, in the order of the ``auto`` preset
(:mod:`pipelines.assemble.presets`). Each reads and extends the
:class:`~pipelines.assemble.state.AssemblyState` and runs in the modes it names: staged
steps until a gate chooses flat mode, flat steps after it, the rest in both. The work is done
by the modules the steps call; a step says what runs when, and what it hands on.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import ClassVar, Literal

from pipelines import maintenance
from pipelines.assemble.flat import (
    SUMMARIES_SECTION,
    flat_context,
    flat_k,
    flat_layout,
    flat_recall,
)
from pipelines.assemble.items import read_stages, retime
from pipelines.assemble.packing import (
    Phases,
    minimum_count,
    pack_staged,
    seed_count,
    staged_rendering,
)
from pipelines.assemble.recalls import own_stage, phase_k, space_recall, start_facts
from pipelines.assemble.related import Related, Scope, related_prior, use_ppr
from pipelines.assemble.render import SLOT_OF, Rendering, decompose_prompt, layout, read_back
from pipelines.assemble.report import Mode, RelatedFacts, SummariesPhase
from pipelines.assemble.request import FACTS_SECTION, FLAT_SECTION, SECTION_KEYS
from pipelines.assemble.stage import (
    budget_gate,
    choose_mode,
    confidence_gate,
    confident_split,
    infer_current_stage,
    named_stage,
    stage_report,
    summary_similarity_ahead,
)
from pipelines.assemble.state import AssemblyState, AssemblyStep, Reads, assembly_report, response
from pipelines.assemble.summaries import stage_summaries, summaries_ahead, whole_history_summaries
from pipelines.prompt.budget import split_budget
from pipelines.recall.intent import Intent
from pipelines.recall.request import MAX_K

_STAGED: frozenset[Mode] = frozenset({"staged"})
_FLAT: frozenset[Mode] = frozenset({"flat"})


class NamedStage(AssemblyStep):
    """The stage the caller names (``stage``, else its ``session``); 404 when it has none."""

    kind: Literal["stage"] = "stage"

    def run(self, state: AssemblyState) -> None:
        state.named, state.how = named_stage(state.run)


class ModeGate(AssemblyStep):
    """The density gate (``flat``: flat mode whatever the counts, the flat preset); a stage
    the caller named is then reported unused."""

    kind: Literal["mode"] = "mode"
    flat: bool = False

    def run(self, state: AssemblyState) -> None:
        state.choice = choice = choose_mode(state.run, state.run.density, self.flat)
        if choice.mode == "flat":
            unused = None
            if state.named is not None:
                reason = "flat mode: the stage is not used"
                unused = stage_report(state.named, str(state.how), False, reason)
            state.go_flat(choice.reason, unused)


class BudgetGate(AssemblyStep):
    """The staged sections' layout, and the budget gate: no inferred stage for a small
    budget."""

    kind: Literal["budget_gate"] = "budget_gate"
    modes: ClassVar[frozenset[Mode]] = frozenset({"staged"})

    def run(self, state: AssemblyState) -> None:
        state.layout = lay = layout(state.run, [SLOT_OF[k] for k in SECTION_KEYS])
        why = budget_gate(state.run.config, lay.section_budget)
        if state.named is None and why is not None and state.choice is not None:
            reason = "not inferred: the sections' budget is below inferred_stage_min_tokens"
            unused = stage_report(None, "none", False, reason)
            state.go_flat(why, unused)


class ReadsAhead(AssemblyStep):
    """Start the reads that need nothing from the steps before them: the stage list, the
    projection check (PageRank on), the summary similarity (a stage to infer)."""

    kind: Literal["reads_ahead"] = "reads_ahead"
    modes: ClassVar[frozenset[Mode]] = _STAGED

    def run(self, state: AssemblyState) -> None:
        run = state.run
        stages = run.read_ahead.submit(
            run.store.read, "assemble/stages", space=run.space, as_of=run.as_of
        )
        projection: Future[str | None] | None = None
        if use_ppr(run):
            projection = run.read_ahead.submit(
                maintenance.ensure_entity_projection, run.engine, run.space
            )
        similarity = None
        if state.named is None and run.config.stage_vote_weight_summaries > 0:
            count = state.choice.stage_count if state.choice else 0
            similarity = summary_similarity_ahead(run, count)
        state.reads = Reads(stages, projection, similarity)


class FactsAhead(AssemblyStep):
    """Start reading the facts beside the recalls (unless a step before started it)."""

    kind: Literal["facts_ahead"] = "facts_ahead"

    def run(self, state: AssemblyState) -> None:
        if state.facts_reading is None:
            state.facts_reading = start_facts(state.run)


class SpaceRecallStep(AssemblyStep):
    """Whole-space recall for staged mode (none when nothing needs it): sized to vote for
    the stage and rank twice Phase 2's share, and to serve flat mode when the confidence gate
    may still choose it (so a gated call recalls once)."""

    kind: Literal["space_recall"] = "space_recall"
    modes: ClassVar[frozenset[Mode]] = _STAGED

    def run(self, state: AssemblyState) -> None:
        run, cfg = state.run, state.run.config
        assert state.layout is not None and state.choice is not None
        most = split_budget(state.layout.section_budget, confident_split(cfg.split, 0.0))
        may_go_flat = state.named is None and cfg.flat_below_confidence is not None
        at_least = flat_k(run) if may_go_flat else 0
        k = min(MAX_K, max(cfg.stage_inference_hits, 2 * phase_k(run, most[1]), at_least))
        need_space = state.named is None or cfg.related_recall_weight > 0
        if need_space and state.choice.stage_count > 0:
            state.recalled = space_recall(run, k)


class CurrentStage(AssemblyStep):
    """The named stage, or the one inferred from the query (flat mode when the confidence
    gate refuses it), with the split, shares and minimum counts it earns."""

    kind: Literal["current_stage"] = "current_stage"
    modes: ClassVar[frozenset[Mode]] = _STAGED

    def run(self, state: AssemblyState) -> None:
        run, cfg = state.run, state.run.config
        assert state.reads is not None and state.layout is not None
        stages = read_stages(state.reads.stages.result())
        named, how, vote = state.named, state.how, None
        if named is None:
            hits = state.recalled.hits if state.recalled else []
            inference = infer_current_stage(run, stages, hits, state.reads.similarity)
            current, reasoning, vote = inference.stage, inference.reasoning, inference.vote
            confidence = inference.confidence
            if (why := confidence_gate(cfg, inference)) is not None and state.choice:
                how = "inferred" if current else "none"
                unused = stage_report(current, how, False, reasoning, vote, confidence)
                state.go_flat(why, unused)
                return
        else:
            current, reasoning, confidence = named, f"named by the caller ({how})", 1.0
            stages.setdefault(named.id, named)
        state.stages, state.current, state.confidence = stages, current, confidence
        state.split = confident_split(cfg.split, confidence)
        state.shares = shares = split_budget(state.layout.section_budget, state.split)
        state.minimums = (minimum_count(cfg, shares[0]), minimum_count(cfg, shares[1]), 0)
        how = how or ("inferred" if current else "none")
        used = current is not None
        state.stage_report = stage_report(current, how, used, reasoning, vote, confidence)


class SummariesAhead(AssemblyStep):
    """Start reading the schemas Phase 3 will most likely want, while phases 1-2 run."""

    kind: Literal["summaries_ahead"] = "summaries_ahead"
    modes: ClassVar[frozenset[Mode]] = _STAGED

    def run(self, state: AssemblyState) -> None:
        share, related_minimum = state.shares[2], state.minimums[1]
        state.ahead = summaries_ahead(
            state.run, state.current, state.stages, share, related_minimum
        )


class OwnStage(AssemblyStep):
    """Phase 1: the current stage's memories, in greedy MMR order (``selection="score"``:
    in score order, the benchmark's no-selection ablation)."""

    kind: Literal["own_stage"] = "own_stage"
    modes: ClassVar[frozenset[Mode]] = frozenset({"staged"})
    selection: Literal["mmr", "score"] = "mmr"

    def run(self, state: AssemblyState) -> None:
        state.selection = self.selection
        mmr = self.selection == "mmr"
        state.phase1 = own_stage(state.run, state.current, state.shares[0], mmr)


class RelatedPrior(AssemblyStep):
    """Phase 2 from the part of Phase 1 its share holds (none without a current stage)."""

    kind: Literal["related"] = "related"
    modes: ClassVar[frozenset[Mode]] = frozenset({"staged"})

    def run(self, state: AssemblyState) -> None:
        run, phase1 = state.run, state.phase1
        if state.current is None:
            state.related = Related(RelatedFacts(run=False, reason="no current stage"))
            return
        seeds = phase1[: seed_count(phase1, state.shares[0], state.minimums[0])]
        scope = Scope(
            state.current,
            state.confidence,
            state.stages,
            state.recalled.hits if state.recalled else [],
            state.reads.projection if state.reads else None,
        )
        state.related = related_prior(run, scope, seeds, phase1, state.shares[1])


class StageSummaries(AssemblyStep):
    """Phase 3 for the stages neither the current stage nor Phase 2's head covers."""

    kind: Literal["summaries"] = "summaries"
    modes: ClassVar[frozenset[Mode]] = _STAGED

    def run(self, state: AssemblyState) -> None:
        covered = {state.current.id} if state.current else set()
        related = state.related.items if state.related else []
        head = related[: max(state.minimums[1], 1)]
        covered |= {i.stage_id for i in head if i.stage_id is not None}
        state.phase3, state.summaries_facts = stage_summaries(
            state.run, state.current, covered, state.stages, state.shares[2], state.ahead
        )


class FlatRecall(AssemblyStep):
    """Flat mode's whole-space recall (the staged one, when a gate made it with flat mode's
    k)."""

    kind: Literal["flat_recall"] = "flat_recall"
    modes: ClassVar[frozenset[Mode]] = _FLAT

    def run(self, state: AssemblyState) -> None:
        state.recalled, state.reused = flat_recall(state.run, state.recalled)


class FlatSummaries(AssemblyStep):
    """Stage summaries for a flat context whose query asks for a summary, and Phase 3's
    report without its ``included`` counts (none: not such a query, or switched off)."""

    kind: Literal["flat_summaries"] = "flat_summaries"
    modes: ClassVar[frozenset[Mode]] = _FLAT

    def run(self, state: AssemblyState) -> None:
        run = state.run
        intent = state.recalled.intent if state.recalled else ""
        if intent != str(Intent.SUMMARIZATION) or run.config.flat_summaries_share <= 0.0:
            return
        room = flat_layout(run).section_budget
        share = int(room * run.config.flat_summaries_share)
        rows = run.store.read("assemble/stages", space=run.space, as_of=run.as_of)
        floor = int(room * run.config.flat_summary_floor)
        items, dropped, facts = whole_history_summaries(run, read_stages(rows), share, floor)
        state.flat_summaries = items
        state.flat_summaries_phase = SummariesPhase(
            **dict(facts),
            selected=len(items),
            dropped=dropped,
            minimum=0,
            share_tokens=share if sum(i.tokens for i in items) <= share else floor,
            included=0,
            included_stages=[],
        )


class Facts(AssemblyStep):
    """The facts read ahead (none when the tier is off)."""

    kind: Literal["facts"] = "facts"

    def run(self, state: AssemblyState) -> None:
        reading = state.facts_reading
        state.facts = reading.result() if reading is not None else []


class PackStaged(AssemblyStep):
    """Staged mode's sections: the records' times set for the candidates of phases 1-2, then
    the three phases and the facts packed into the budget."""

    kind: Literal["pack"] = "pack"
    modes: ClassVar[frozenset[Mode]] = frozenset({"staged"})

    def run(self, state: AssemblyState) -> None:
        run, lay = state.run, state.layout
        assert lay is not None
        related = state.related.items if state.related else []
        retime(run.config.record_time_precision, run.est, state.phase1, related)
        label = state.current.label if state.current else None
        time_order = state.recalled.time_order if state.recalled else False
        items = [state.phase1, related, state.phase3]
        phases = Phases(items, label, state.split, state.minimums, time_order)
        pack = pack_staged(run, lay, phases, state.facts)
        state.staged_pack = pack
        state.rendering = staged_rendering(run, pack)


class PackFlat(AssemblyStep):
    """Flat mode's sections packed into the budget: the facts, the records, the summaries."""

    kind: Literal["pack_flat"] = "pack_flat"
    modes: ClassVar[frozenset[Mode]] = _FLAT

    def run(self, state: AssemblyState) -> None:
        run, recalled, summaries = state.run, state.recalled, state.flat_summaries
        assert recalled is not None
        flat = flat_context(run, recalled, state.reused, summaries, state.facts)
        state.flat_pack = flat
        sections = (FACTS_SECTION,) * bool(flat.facts) + (FLAT_SECTION, SUMMARIES_SECTION)
        state.rendering = Rendering(
            template=flat.layout.template,
            slots=flat.slots,
            slot_of=dict(zip(sections, flat.layout.keys, strict=False)),
            items={
                FLAT_SECTION: flat.kept,
                SUMMARIES_SECTION: summaries,
                FACTS_SECTION: flat.facts,
            },
            layout=flat.layout,
            fact_sources=flat.fact_sources,
        )


class Render(AssemblyStep):
    """The caller's slots, the packed sections and the query through the decomposer, and
    which items survived it."""

    kind: Literal["render"] = "render"

    def run(self, state: AssemblyState) -> None:
        rendering = state.rendering
        assert rendering is not None
        result = decompose_prompt(state.run, rendering.template, rendering.slots)
        state.result = result
        state.back = read_back(state.run, result, rendering.slot_of, rendering.items)


class Report(AssemblyStep):
    """The report and the response (the clock ends here: ``timings_ms.total``)."""

    kind: Literal["report"] = "report"
    timed: ClassVar[bool] = False

    def run(self, state: AssemblyState) -> None:
        assert state.result is not None and state.back is not None
        assert state.rendering is not None
        report = assembly_report(state)
        sources = state.rendering.fact_sources
        state.response = response(state.result, state.back, report, sources)

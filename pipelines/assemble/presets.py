"""Context assembly as configuration: a preset *is* the ordered list of assembly steps, each
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

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, model_validator

from pipelines.assemble.state import AssemblyStep
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

__all__ = ["AUTO", "FLAT", "AssemblyPreset"]

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

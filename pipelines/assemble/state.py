"""One assembly as data: its inputs and services (:class:`~pipelines.assemble.run.Run`), what
its steps found so far
(:class:`AssemblyState`), the shape of a step (:class:`AssemblyStep`) and the runner that
calls a preset's steps in order (:func:`run_steps`), timing each one.

A step runs when the state's mode is one of its ``modes``: every assembly starts staged, and
a gate (density, budget, confidence) that chooses flat mode switches the state, so the steps
after it are flat mode's. Staged and flat contexts so come from one runner and one preset.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from pipelines.assemble.decomposer import DecomposedPrompt
from pipelines.assemble.facts import Fact
from pipelines.assemble.flat import FlatContext
from pipelines.assemble.items import Item, Stage
from pipelines.assemble.mode import ModeChoice
from pipelines.assemble.recalls import SpaceRecall
from pipelines.assemble.related import Related
from pipelines.assemble.render import Layout, ReadBack, Rendering
from pipelines.assemble.report import (
    ContextResponse,
    Mode,
    StageReport,
    SummariesFacts,
    SummariesPhase,
)
from pipelines.assemble.run import Run
from pipelines.assemble.staged_facts import StagedPack
from pipelines.assemble.summaries import Ahead
from pipelines.graph import Row

__all__ = ["AssemblyState", "AssemblyStep", "Reads", "run_steps"]


@dataclass
class Reads:
    """Reads started ahead, beside whole-space recall: the stage list, the projection check
    (PageRank on), the query's similarity to the stage summaries (an inferred stage)."""

    stages: Future[list[Row]]
    projection: Future[str | None] | None
    similarity: Future[list[Row]] | None


@dataclass
class AssemblyState:
    """What the steps of one assembly have found so far; each step reads and extends it."""

    run: Run
    ablate: tuple[str, ...] = ()
    mode: Mode = "staged"
    choice: ModeChoice | None = None
    named: Stage | None = None
    how: str | None = None
    stage_report: StageReport | None = None
    layout: Layout | None = None
    reads: Reads | None = None
    facts_reading: Future[list[Fact]] | None = None
    recalled: SpaceRecall | None = None
    stages: dict[str, Stage] = field(default_factory=dict)
    current: Stage | None = None
    confidence: float = 0.0
    split: tuple[float, float, float] = (0.0, 0.0, 0.0)
    shares: tuple[int, int, int] = (0, 0, 0)
    minimums: tuple[int, int, int] = (0, 0, 0)
    selection: Literal["mmr", "score"] = "mmr"
    ahead: Ahead | None = None
    phase1: list[Item] = field(default_factory=list)
    related: Related | None = None
    phase3: list[Item] = field(default_factory=list)
    summaries_facts: SummariesFacts | None = None
    reused: bool = False
    flat_summaries: list[Item] = field(default_factory=list)
    flat_summaries_phase: SummariesPhase | None = None
    facts: list[Fact] = field(default_factory=list)
    staged_pack: StagedPack | None = None
    flat_pack: FlatContext | None = None
    rendering: Rendering | None = None
    result: DecomposedPrompt | None = None
    back: ReadBack | None = None
    response: ContextResponse | None = None

    def go_flat(self, choice: ModeChoice, stage: StageReport | None) -> None:
        """A gate chose flat mode (``choice`` says why); ``stage``: the stage left unused."""
        self.mode, self.choice = "flat", choice
        self.stage_report = stage


class AssemblyStep(BaseModel):
    """One step of an assembly preset. Subclasses set ``kind`` (a literal: its name in the
    preset and in ``report.timings_ms``), the ``modes`` it runs in, and implement
    :meth:`run`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    modes: ClassVar[frozenset[Mode]] = frozenset({"staged", "flat"})
    #: Timed by the runner (the report step ends the clock itself).
    timed: ClassVar[bool] = True

    def run(self, state: AssemblyState) -> None:
        """Do the step: read and extend ``state``."""
        raise NotImplementedError


def run_steps(steps: Iterable[AssemblyStep], state: AssemblyState) -> None:
    """Run each step whose modes include the state's mode (a gate may switch it to flat
    between two steps), in order, each timed under its kind (and traced as
    ``assemble.<kind>``)."""
    for step in steps:
        if state.mode not in step.modes:
            continue
        step.run(state)
        if step.timed:
            state.run.clock.lap(step.kind)

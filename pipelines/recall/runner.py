"""Run a preset's steps over a recall state: the one place that checks the deadline, times
the steps and files their explanations."""

from __future__ import annotations

import time
from collections.abc import Iterable

from pipelines.recall.state import Explanations, RecallState
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.tracing import span


class Clock:
    """Wall time since the recall started, per step, and the request's deadline."""

    def __init__(self, deadline_ms: int | None) -> None:
        self.start = time.perf_counter()
        self.last = self.start
        self.deadline = None if deadline_ms is None else self.start + deadline_ms / 1000.0
        self.timings: dict[str, float] = {}

    def lap(self, step: str) -> None:
        now = time.perf_counter()
        self.timings[step] = round((now - self.last) * 1000.0, 3)
        self.last = now

    def expired(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def total(self) -> dict[str, float]:
        self.timings["total"] = round((time.perf_counter() - self.start) * 1000.0, 3)
        return self.timings


def run_steps(
    steps: Iterable[RecallStep], state: RecallState, ctx: StepContext, clock: Clock
) -> None:
    """Run each step that applies, in order. An optional step is skipped once the deadline
    has passed (``state.complete`` turns false); every step that ran is timed under its
    kind (and traced as ``recall.<kind>`` with tracing on); explanations are kept only when
    the request asks for them."""
    for step in steps:
        if not step.applies(state, ctx):
            continue
        if step.optional and clock.expired():
            state.complete = False
            continue
        with span(f"recall.{step.kind}"):
            notes = step.run(state, ctx)
        if notes and state.explaining:
            file_explanations(state.explanations, step.explain_as, notes)
        clock.lap(step.kind)
    state.timings = clock.total()


def file_explanations(into: Explanations, key: str | None, notes: Explanations) -> None:
    """A step's explanations: the top level of each result's (``key`` None, the fusion that
    ranks every candidate), else under ``key`` for the candidates explained so far."""
    if key is None:
        for item_id, entry in notes.items():
            into.setdefault(item_id, {}).update(entry)
        return
    for item_id, entry in notes.items():
        if item_id in into:
            into[item_id][key] = entry

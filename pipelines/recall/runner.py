"""Run a preset's steps over a recall state: the one place that starts the round trips the
steps declare (each as soon as the state holds its inputs), checks the deadline, times the
steps and files their explanations."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from pipelines.recall.state import Explanations, RecallState
from pipelines.recall.steps.base import Read, RecallStep, StepContext
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
    """Run each step that applies, in order. Before each step, every read a step of the
    preset declares whose inputs the state now holds is started (:func:`start_reads`). An
    optional step is skipped once the deadline has passed (``state.complete`` turns false);
    every step that ran is timed under its kind (and traced as ``recall.<kind>`` with
    tracing on); explanations are kept only when the request asks for them."""
    steps = list(steps)
    pending = declared_reads(steps)
    for step in steps:
        pending = start_reads(pending, state, ctx, clock)
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


def declared_reads(steps: Sequence[RecallStep]) -> list[Read[Any]]:
    """Every read the steps declare, once each, in step order."""
    reads: dict[str, Read[Any]] = {}
    for step in steps:
        for read in step.reads:
            reads.setdefault(read.name, read)
    return list(reads.values())


def start_reads(
    pending: list[Read[Any]], state: RecallState, ctx: StepContext, clock: Clock
) -> list[Read[Any]]:
    """Start each of ``pending`` that is ready and wanted: on the executor (bounded by its
    threads) when there is one and ``candidates.concurrent_signals`` is on, else as a call
    the waiting step makes. Each start is timed (and traced as ``recall.read.<name>``)
    under the read's name; returns the reads not ready yet."""
    executor = ctx.executor if ctx.config.candidates.concurrent_signals else None
    waiting = []
    for read in pending:
        if not read.ready(state):
            waiting.append(read)
            continue
        if (executor is None and read.concurrent_only) or not read.wanted(state, ctx):
            continue
        with span(f"recall.read.{read.name}"):
            call = read.call(state, ctx)
            if call is not None:
                state.reads[read.name] = call if executor is None else executor.submit(call).result
        clock.lap(read.name)
    return waiting


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

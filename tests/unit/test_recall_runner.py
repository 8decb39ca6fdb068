"""The runner: the declared reads, the deadline, the timings and the explanations, once for
every step."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, Literal

from pipelines.recall.runner import Clock, file_explanations, run_steps
from pipelines.recall.state import Explanations, RecallState
from pipelines.recall.steps.base import Read, RecallStep, StepContext, after_understand
from tests.unit.recall_state import cand, ctx, plan, state


class Note(RecallStep):
    kind: Literal["note"] = "note"
    explain_as: ClassVar[str | None] = "note"
    said: str = "hi"

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        return {i: {"said": self.said} for i in state.order}


class Slow(RecallStep):
    kind: Literal["slow"] = "slow"

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        time.sleep(0.01)
        return None


class Optional(Note):
    kind: Literal["optional"] = "optional"  # type: ignore[assignment]
    optional: ClassVar[bool] = True


class Never(Note):
    kind: Literal["never"] = "never"  # type: ignore[assignment]

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return False


def _state(**kw):
    return state([cand("a"), cand("b")], [("a", 2.0), ("b", 1.0)], **kw)


def test_steps_run_in_order_timed_and_explained() -> None:
    s = _state()
    run_steps([Note(), Never(), Optional()], s, ctx(), Clock(None))
    assert list(s.timings) == ["note", "optional", "total"]  # a step that does not apply: untimed
    assert s.explanations["a"] == {"note": {"said": "hi"}}
    assert s.complete


def test_optional_steps_are_skipped_once_the_deadline_has_passed() -> None:
    s = _state()
    run_steps([Slow(), Note(), Optional(said="late")], s, ctx(), Clock(1))
    assert not s.complete
    assert "optional" not in s.timings and "note" in s.timings  # required steps still run
    assert s.explanations["a"] == {"note": {"said": "hi"}}


def test_explanations_are_kept_only_when_asked() -> None:
    s = _state(explain=False)
    run_steps([Note()], s, ctx(), Clock(None))
    assert s.explanations == {}


def test_filing_explanations() -> None:
    into: Explanations = {"a": {"fused": 1.0}}
    file_explanations(into, "rerank", {"a": {"score": 2}, "z": {"score": 3}})
    assert into == {"a": {"fused": 1.0, "rerank": {"score": 2}}}  # only explained candidates
    file_explanations(into, None, {"a": {"boosts": {}}, "b": {"fused": 0.5}})
    assert into == {"a": {"fused": 1.0, "rerank": {"score": 2}, "boosts": {}}, "b": {"fused": 0.5}}


def _read(name: str, log: list[str], *, concurrent_only: bool = False) -> Read[str]:
    """A read ready once the state has a plan, whose call logs when it runs."""

    def call(state: RecallState, ctx: StepContext):
        def run() -> str:
            log.append(name)
            return name

        return run

    return Read(name, after_understand, lambda s, c: True, call, concurrent_only)


def _waits_for(read: Read[str], seen: list[str | None]) -> RecallStep:
    class Waits(Note):
        kind: Literal["waits"] = "waits"  # type: ignore[assignment]
        reads: ClassVar[tuple[Read[Any], ...]] = (read,)

        def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
            seen.append(read.result(state))
            return None

    return Waits()


def test_a_declared_read_starts_as_soon_as_its_inputs_exist() -> None:
    log: list[str] = []
    seen: list[str | None] = []
    ahead = _read("ahead", log)
    with ThreadPoolExecutor(1) as pool:
        s = _state()
        s.plan_ = None  # the understand step has not run

        class Understand(Note):
            kind: Literal["understand"] = "understand"  # type: ignore[assignment]

            def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
                assert not ahead.started(state)  # no plan yet: not ready
                state.plan_ = plan()
                return None

        run_steps(
            [Understand(), Slow(), _waits_for(ahead, seen)], s, ctx(executor=pool), Clock(None)
        )
    assert seen == ["ahead"] and log == ["ahead"]
    # started right after understand, before the slow step: timed under its own name
    assert list(s.timings) == ["understand", "ahead", "slow", "waits", "total"]


def test_without_the_executor_a_read_is_a_call_or_not_made() -> None:
    log: list[str] = []
    seen: list[str | None] = []
    lazy, only_ahead = _read("lazy", log), _read("only_ahead", log, concurrent_only=True)
    s = _state()
    run_steps([_waits_for(lazy, seen)], s, ctx(), Clock(None))
    assert seen == ["lazy"] and log == ["lazy"]  # made by the step that waits, when it waits
    s = _state()
    run_steps([_waits_for(only_ahead, seen)], s, ctx(), Clock(None))
    assert seen == ["lazy", None] and not only_ahead.started(s) and log == ["lazy"]

"""The runner: the deadline, the timings and the explanations, once for every step."""

from __future__ import annotations

import time
from typing import ClassVar, Literal

from pipelines.recall.runner import Clock, file_explanations, run_steps
from pipelines.recall.state import Explanations, RecallState
from pipelines.recall.steps.base import RecallStep, StepContext
from tests.unit.recall_state import cand, ctx, state


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

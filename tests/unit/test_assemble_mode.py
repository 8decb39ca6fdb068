"""Staged or flat: the density, budget and confidence gates on in-memory counts."""

from __future__ import annotations

from typing import cast

from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.items import Stage
from pipelines.assemble.request import Run
from pipelines.assemble.stage import (
    FORCED_FLAT,
    DensityCache,
    Inference,
    budget_gate,
    choose_mode,
    confidence_gate,
    decide_mode,
)

CONFIG = AssemblyConfig()


def test_a_dense_space_is_staged_and_the_counts_are_reported() -> None:
    choice = decide_mode(7_680, 40, CONFIG, 384)
    assert choice.mode == "staged" and choice.stage_count == 40
    assert choice.density is not None
    assert choice.density.as_dict() == {
        "memories": 7_680,
        "stages": 40,
        "memories_per_stage": 192.0,
        "memories_per_dimension": 20.0,
        "use_stages": True,
    }
    assert "stage-aware assembly" in choice.reason


def test_small_or_sparse_spaces_are_flat_and_say_why() -> None:
    small = decide_mode(94, 5, CONFIG, 384)
    assert small.mode == "flat" and "per embedding dimension" in small.reason
    assert small.density is not None and small.density.use_stages is False
    sparse = decide_mode(5_000, 1_000, CONFIG, 384)
    assert sparse.mode == "flat" and "memories per stage" in sparse.reason
    one = decide_mode(5_000, 1, CONFIG, 384)
    assert one.mode == "flat" and "1 stage(s)" in one.reason


class _NoCounts:
    def counts(self, *_: object) -> None:
        raise AssertionError("forced flat mode reads no counts")


def test_forced_flat_mode_reads_no_counts() -> None:
    forced = choose_mode(cast(Run, None), cast(DensityCache, _NoCounts()), flat=True)
    assert forced is FORCED_FLAT
    assert forced.mode == "flat" and forced.density is None and forced.stage_count == 0
    assert forced.reason == "flat recall requested (flat=true)"


def test_the_budget_gate_keeps_small_contexts_flat() -> None:
    assert budget_gate(CONFIG, 800) is None  # at the threshold: staged
    reason = budget_gate(CONFIG, 799)
    assert reason is not None
    assert "799 section tokens < inferred_stage_min_tokens 800" in reason
    assert budget_gate(AssemblyConfig(inferred_stage_min_tokens=None), 10) is None


def _stage(name: str) -> Stage:
    return Stage(f"label:{name}", name, "label", None, None, 1)


def test_the_confidence_gate_refuses_a_stage_nothing_points_at() -> None:
    sure = Inference(_stage("trip"), "votes", None, 0.4)
    unsure = Inference(_stage("trip"), "votes", None, 0.0)
    nothing = Inference(None, "the space has no stages", None, 0.0)
    assert confidence_gate(CONFIG, sure) is None
    reason = confidence_gate(CONFIG, unsure)
    assert reason is not None and reason.startswith("stage inference not confident: trip")
    assert "0.000 <= flat_below_confidence 0" in reason
    no_stage = confidence_gate(CONFIG, nothing)
    assert no_stage is not None and "no stage at confidence" in no_stage
    assert confidence_gate(AssemblyConfig(flat_below_confidence=None), unsure) is None
    assert confidence_gate(AssemblyConfig(flat_below_confidence=0.5), sure) is not None

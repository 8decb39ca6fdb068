"""Tests for pipelines.ingest.stages (pluggable stage detection)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.ingest.stages import (
    CompositeStageDetector,
    ExplicitStageDetector,
    SessionSpan,
    StageAssignment,
    StageDetector,
    StageState,
    TimeGapStageDetector,
    assign_stages,
    default_stage_detector,
    stage_spans,
    time_stage_key,
)

T0 = datetime(2024, 5, 8, 9, 0, tzinfo=UTC)


def _session(sid: str, start_h: float, end_h: float | None = None, label: str | None = None):
    end = None if end_h is None else T0 + timedelta(hours=end_h)
    return SessionSpan(sid, T0 + timedelta(hours=start_h), end, label)


def _keys(assignments: Sequence[StageAssignment]) -> list[str]:
    return [a.stage_key for a in assignments]


# --------------------------------------------------------------------------- sessions


def test_session_normalises_times() -> None:
    naive = SessionSpan("a", datetime(2024, 5, 8, 9, 0))
    assert naive.start.tzinfo is UTC and naive.end == naive.start
    cest = timezone(timedelta(hours=2))
    local = SessionSpan("b", datetime(2024, 5, 8, 11, 0, tzinfo=cest))
    assert local.start == T0 and local.start.tzinfo is UTC
    with pytest.raises(ValueError, match="ends before"):
        _session("c", 2, 1)


def test_time_stage_key() -> None:
    assert time_stage_key(T0) == "gap:20240508T090000Z"
    assert time_stage_key(datetime(2024, 5, 8, 9, 0)) == "gap:20240508T090000Z"
    assert time_stage_key(T0 + timedelta(microseconds=5)) == "gap:20240508T090000.000005Z"


# --------------------------------------------------------------------------- time gap


def test_time_gap_boundaries() -> None:
    sessions = [
        _session("s1", 0, 1),
        _session("s2", 3, 4),  # 2 h after s1 ended
        _session("s3", 8, 9),  # exactly 4 h: still the same stage
        _session("s4", 13.5, 14),  # 4.5 h: new stage
        _session("s5", 40),  # next day, single turn
    ]
    result = assign_stages(sessions, None, TimeGapStageDetector())
    assert _keys(result) == [
        "gap:20240508T090000Z",
        "gap:20240508T090000Z",
        "gap:20240508T090000Z",
        "gap:20240508T223000Z",
        "gap:20240510T010000Z",
    ]
    assert [a.reason.split()[0] for a in result] == ["first", "gap", "gap", "gap", "gap"]
    assert "> 4:00:00" in result[3].reason
    assert not any(a.continued for a in result)


def test_overlapping_sessions_share_a_stage() -> None:
    result = assign_stages(
        [_session("a", 0, 10), _session("b", 2, 3), _session("c", 13, 14)],
        None,
        TimeGapStageDetector(),
    )
    assert len(set(_keys(result))) == 1  # c is 3 h after a ends, not after b


def test_results_follow_input_order_whatever_the_order() -> None:
    sessions = [_session("late", 30), _session("early", 0), _session("mid", 2)]
    result = assign_stages(sessions, None, TimeGapStageDetector())
    assert [a.session_id for a in result] == ["late", "early", "mid"]
    assert result[1].stage_key == result[2].stage_key != result[0].stage_key


def test_continues_the_existing_last_stage() -> None:
    existing = StageState("gap:20240508T090000Z", T0, T0 + timedelta(hours=2), "gap")
    result = assign_stages(
        [_session("n1", 5), _session("n2", 12)], existing, TimeGapStageDetector()
    )
    assert result[0].stage_key == existing.key and result[0].continued
    assert result[1].stage_key == "gap:20240508T210000Z" and not result[1].continued
    spans = stage_spans([_session("n1", 5), _session("n2", 12)], result, existing)
    assert spans[existing.key] == StageState(existing.key, T0, T0 + timedelta(hours=5), "gap")
    assert spans["gap:20240508T210000Z"].start == T0 + timedelta(hours=12)


def test_stage_of_another_kind_is_not_continued() -> None:
    existing = StageState("label:alpha", T0, T0 + timedelta(hours=2), "label")
    [assignment] = assign_stages([_session("n1", 3)], existing, TimeGapStageDetector())
    assert assignment.stage_key == "gap:20240508T120000Z" and not assignment.continued


def test_backfill_before_the_existing_stage_is_kept_apart() -> None:
    existing = StageState("gap:20240508T090000Z", T0, T0 + timedelta(hours=2), "gap")
    result = assign_stages(
        [_session("old", -1), _session("new", 3)], existing, TimeGapStageDetector()
    )
    assert result[0].stage_key == "gap:20240508T080000Z"
    assert result[1].stage_key == existing.key


@given(
    st.lists(st.integers(min_value=0, max_value=60 * 24 * 5), min_size=1, max_size=25),
    st.integers(min_value=1, max_value=24),
    st.integers(min_value=0, max_value=8 * 60),
)
def test_incremental_batches_match_one_batch(
    starts_min: list[int], split_at: int, gap_min: int
) -> None:
    gap = timedelta(minutes=gap_min)
    detector = TimeGapStageDetector(gap)
    sessions = [
        SessionSpan(f"s{i:03d}", T0 + timedelta(minutes=m), T0 + timedelta(minutes=m + 30))
        for i, m in enumerate(sorted(starts_min))
    ]
    whole = assign_stages(sessions, None, detector)
    cut = min(split_at, len(sessions))
    first = assign_stages(sessions[:cut], None, detector)
    spans = stage_spans(sessions[:cut], first)
    last = max(spans.values(), key=lambda s: s.end)
    second = assign_stages(sessions[cut:], last, detector)
    assert _keys(whole) == _keys(first) + _keys(second)
    # Invariants: inside a stage, each session starts within `gap` of the running end;
    # between stages the gap is larger than `gap`.
    running_end: dict[str, datetime] = {}
    for session, assignment in zip(sessions, whole, strict=True):
        end = running_end.get(assignment.stage_key)
        if end is None:
            assert all(session.start - e > gap for e in running_end.values())
        else:
            assert session.start - end <= gap
        running_end[assignment.stage_key] = max(end or session.stop, session.stop)


# --------------------------------------------------------------------------- explicit / composite


def test_explicit_labels() -> None:
    sessions = [
        _session("a", 0, label="Project  Alpha"),
        _session("b", 1, label="project alpha"),
        _session("c", 2, label="  "),
        _session("d", 3),
    ]
    existing = StageState("label:project alpha", T0, T0, "label")
    result = assign_stages(sessions, existing, ExplicitStageDetector())
    assert _keys(result) == [
        "label:project alpha",
        "label:project alpha",
        "label:default",
        "label:default",
    ]
    assert [a.continued for a in result] == [True, True, False, False]
    assert "fallback" in result[2].reason


def test_composite_uses_labels_then_time_gaps() -> None:
    sessions = [
        _session("a", 0, label="alpha"),
        _session("b", 1),
        _session("c", 2, label="alpha"),
        _session("d", 10),
    ]
    existing = StageState("gap:20240508T080000Z", T0 - timedelta(hours=1), T0, "gap")
    result = assign_stages(sessions, existing, default_stage_detector())
    assert _keys(result) == [
        "label:alpha",
        "gap:20240508T080000Z",
        "label:alpha",
        "gap:20240508T190000Z",
    ]
    assert result[1].continued and result[1].kind == "gap"
    assert result[0].kind == "label"
    assert isinstance(CompositeStageDetector(), StageDetector)


class _CommunityDetector:
    """A stand-in for a future community-based detector: precomputed session -> community."""

    kind = "community"

    def __init__(self, communities: dict[str, int]) -> None:
        self.communities = communities

    def assign(
        self, sessions: Sequence[SessionSpan], last_stage: StageState | None
    ) -> list[StageAssignment]:
        return [
            StageAssignment(
                s.session_id,
                f"community:{self.communities[s.session_id]}",
                self.kind,
                last_stage is not None
                and last_stage.key == f"community:{self.communities[s.session_id]}",
                "precomputed community",
            )
            for s in sessions
        ]


def test_protocol_admits_new_detectors() -> None:
    detector = _CommunityDetector({"a": 1, "b": 2})
    assert isinstance(detector, StageDetector)
    result = assign_stages([_session("a", 0), _session("b", 1)], None, detector)
    assert _keys(result) == ["community:1", "community:2"]
    composite = CompositeStageDetector(fallback=detector)
    mixed = assign_stages([_session("a", 0), _session("b", 1, label="x")], None, composite)
    assert _keys(mixed) == ["community:1", "label:x"]


class _BrokenDetector:
    kind = "broken"

    def assign(
        self, sessions: Sequence[SessionSpan], last_stage: StageState | None
    ) -> list[StageAssignment]:
        return []


def test_assign_stages_validates() -> None:
    assert assign_stages([], None) == []
    with pytest.raises(ValueError, match="duplicate"):
        assign_stages([_session("a", 0), _session("a", 1)], None)
    with pytest.raises(ValueError, match="one assignment per session"):
        assign_stages([_session("a", 0)], None, _BrokenDetector())
    with pytest.raises(ValueError, match="negative"):
        TimeGapStageDetector(timedelta(hours=-1))

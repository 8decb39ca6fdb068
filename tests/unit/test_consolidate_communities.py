"""Community stages (pure): folding small communities, stable ids, the stage detector."""

from datetime import UTC, datetime, timedelta

from pipelines.consolidate.communities import (
    CommunityStageDetector,
    Unit,
    community_stage_id,
    group_units,
    match_stage_ids,
    plan_stages,
)
from pipelines.consolidate.config import CommunityConfig
from pipelines.ingest.stages import SessionSpan, StageDetector, assign_stages

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def unit(uid, size, day, stage=None):
    t = T0 + timedelta(days=day)
    return Unit(uid, "session", uid, size, t, t + timedelta(hours=1), stage)


def test_small_communities_join_their_predecessor():
    units = [unit("s1", 3, 0), unit("s2", 1, 1), unit("s3", 3, 2)]
    comms = {"s1": 1, "s2": 2, "s3": 3}
    groups = group_units(units, comms, min_size=3)
    assert sorted([u.id for u in g] for g in groups) == [["s1", "s2"], ["s3"]]
    # the very first being small joins its successor
    assert [[u.id for u in g] for g in group_units(units, {"s1": 9, "s2": 3, "s3": 3}, 4)] == [
        ["s1", "s2", "s3"]
    ]
    # units Leiden did not see (no active memories) are left where they are
    assert group_units(units, {"s1": 1}, 1) == [[units[0]]]


def test_ids_stay_stable_when_communities_barely_change():
    old = {"community:x": frozenset("abcd"), "community:y": frozenset("efgh")}
    groups = [frozenset("efghi"), frozenset("abc")]
    assert match_stage_ids(groups, old, 0.5) == [("community:y", True), ("community:x", True)]
    # a genuinely new community gets an id derived from its members
    new = frozenset("pqr")
    ids = match_stage_ids([new], old, 0.5)
    assert ids == [(community_stage_id(new), False)]
    assert ids == match_stage_ids([new], old, 0.5)  # deterministic
    # a derived id that an earlier (crashed) run already created is reused
    assert match_stage_ids([new], {community_stage_id(new): frozenset("p")}, 0.9) == [
        (community_stage_id(new), True)
    ]


def test_plan_stages_extents_and_sizes():
    units = [unit("s1", 3, 0), unit("s2", 4, 3)]
    [plan] = plan_stages(units, {"s1": 1, "s2": 1}, {}, CommunityConfig())
    assert plan.units == ("s1", "s2") and plan.size == 7 and not plan.reused
    assert plan.start == T0 and plan.end == T0 + timedelta(days=3, hours=1)
    assert plan.id == community_stage_id(["s1", "s2"])


def test_detector_follows_the_stage_protocol():
    det = CommunityStageDetector({"s1": "community:x"})
    assert isinstance(det, StageDetector)
    spans = [SessionSpan("s1", T0), SessionSpan("s2", T0 + timedelta(days=1))]
    got = assign_stages(spans, None, det)
    assert got[0].stage_key == "community:x" and got[0].kind == "community"
    assert got[1].stage_key.startswith("gap:")  # unknown sessions fall back to time gaps

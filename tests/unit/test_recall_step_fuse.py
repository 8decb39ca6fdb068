"""Step ``fuse`` on an in-memory pool: rankings, weighted RRF, boosts, explanations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.intent import Intent
from pipelines.recall.state import cosine_from_neo4j
from pipelines.recall.steps.fuse import Fuse, fuse, rankings
from pipelines.recall.time_expressions import TimeConstraint
from tests.unit.recall_state import NOW, cand, ctx, plan, state

CFG = DEFAULT_RECALL_CONFIG
#: Without the question prior (a factor of 1 leaves question turns alone).
NO_PRIOR = merge_overrides(CFG, {"fusion": {"question_turn_factor": 1.0}}, "recall")


def _pool(*candidates):
    return {c.id: c for c in candidates}


def test_rankings_break_ties_by_id_and_drop_flat_context_signals() -> None:
    pool = _pool(
        cand("b", raw={"vector": 0.8}, heat=0.5),
        cand("a", raw={"vector": 0.8, "fulltext": 2.0}, heat=0.5),
        cand("c", raw={"fulltext": 3.0}, heat=0.5, event_time=NOW - timedelta(days=1)),
        cand("d", raw={"heat": 1.0}, heat=0.9),  # a heat-only candidate: not a content match
    )
    r = rankings(pool, plan(), CFG)
    assert r["vector"] == ["a", "b"] and r["fulltext"] == ["c", "a"]
    assert "heat" not in r  # every content candidate is equally hot
    assert "recency" not in r  # one dated candidate says nothing


def test_fusion_boosts_and_explains() -> None:
    window = TimeConstraint(
        datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 6, 1, tzinfo=UTC), "May", "range"
    )
    pool = _pool(
        cand("a", raw={"vector": 0.9}, speaker="Bob"),
        cand("b", raw={"vector": 0.8}, speaker="Ann", event_time=datetime(2023, 5, 5, tzinfo=UTC)),
        cand("c", raw={"vector": 0.7}, text="Did you go?", named_speaker_session=True),
    )
    p = plan(query_speakers=["Ann"], windows=[window])
    ranking, notes, speaker_match = fuse(pool, p, CFG, explain=True)
    assert ranking[0][0] == "b"  # time and speaker boosts lift it over "a"
    assert notes["b"]["boosts"] == {"time": 1.3, "speaker": 1.6}
    assert notes["c"]["boosts"] == {"speaker_session": 3.0, "question": 0.7}
    assert speaker_match == 1 / 3  # of the best 3 content matches, one said by Ann
    assert notes["a"]["signals"]["vector"]["rank"] == 1
    assert notes["a"]["signals"]["vector"]["score"] == cosine_from_neo4j(0.9)
    assert notes["a"]["fused"] > 0
    _, silent, _ = fuse(pool, p, NO_PRIOR, explain=False)
    assert silent == {}
    plain, _, none = fuse(pool, plan(), NO_PRIOR, explain=False)
    assert [i for i, _ in plain] == ["a", "b", "c"] and none is None


def test_speaker_match_counts_the_named_speakers_conversations_only() -> None:
    # Two other people's conversation matches best; in Ann's own, she said one of two.
    pool = _pool(
        cand("x1", raw={"vector": 0.95}, speaker="Cy", named_speaker_session=False),
        cand("x2", raw={"vector": 0.9}, speaker="Di", named_speaker_session=False),
        cand("a", raw={"vector": 0.8}, speaker="Ann", named_speaker_session=True),
        cand("b", raw={"vector": 0.7}, speaker="Bob", named_speaker_session=True),
    )
    _, _, match = fuse(pool, plan(query_speakers=["ann"]), NO_PRIOR, False)
    assert match == 1 / 2
    only_others = {k: v for k, v in pool.items() if k.startswith("x")}
    _, _, none_said = fuse(only_others, plan(query_speakers=["Ann"]), NO_PRIOR, False)
    assert none_said == 0.0


def test_window_rankings_weigh_like_the_vector_signal() -> None:
    pool = _pool(cand("a", raw={"window:0": 0.9}), cand("b", raw={"vector": 0.9}))
    _, notes, _ = fuse(pool, plan(), NO_PRIOR, explain=True)
    assert notes["a"]["signals"]["window:0"]["weight"] == CFG.fusion.time_window_weight


def test_run_replaces_the_ranking() -> None:
    s = state([cand("a", raw={"fulltext": 1.0}), cand("b", raw={"fulltext": 2.0})])
    s.explanations = {}
    notes = Fuse().run(s, ctx())
    assert s.order == ["b", "a"] and set(s.scores) == {"a", "b"}
    assert notes is not None and set(notes) == {"a", "b"}


def test_first_person_queries_favour_the_users_own_turns() -> None:
    pool = _pool(
        cand("a", raw={"vector": 0.9}, role="assistant"),
        cand("u", raw={"vector": 0.8}, role="user"),
    )
    cfg = NO_PRIOR.model_copy(
        update={"fusion": NO_PRIOR.fusion.model_copy(update={"first_person_user_factor": 3.0})}
    )
    ranking, notes, _ = fuse(pool, plan(first_person=True), cfg, True)
    assert [i for i, _ in ranking] == ["u", "a"]
    assert notes["u"]["boosts"] == {"first_person": 3.0}
    # not first person, a summary (both parties), or a space of one role: the order is kept
    for p, roles in (
        (plan(first_person=False), ("assistant", "user")),
        (plan(first_person=True, intent=Intent.SUMMARIZATION), ("assistant", "user")),
        (plan(first_person=True), ("user", "user")),
    ):
        same = _pool(
            cand("a", raw={"vector": 0.9}, role=roles[0]),
            cand("u", raw={"vector": 0.8}, role=roles[1]),
        )
        assert [i for i, _ in fuse(same, p, cfg, False)[0]] == ["a", "u"]


def test_the_standing_ranking_is_weighed_by_its_own_weight() -> None:
    pool = _pool(
        cand("v", raw={"vector": 0.9}),
        cand("s", raw={"standing": 0.7}),
    )
    cfg = NO_PRIOR.model_copy(
        update={"fusion": NO_PRIOR.fusion.model_copy(update={"standing_weight": 2.0})}
    )
    ranking, notes, _ = fuse(pool, plan(), cfg, True)
    assert [i for i, _ in ranking] == ["s", "v"]
    assert notes["s"]["signals"]["standing"]["weight"] == 2.0

"""Step ``replies``: a summary request brings the reply to each of its best results right
after it (the next turn, said by someone else: the other role, or the other person of a
two-person chat); the request's filters still hold, other intents are left alone, and nothing
comes from another space."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from pipelines.ingest.service import Ingestor, SessionIn, TurnIn
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.request import RecallFilters
from pipelines.recall.service import RecallRequest, RecallResponse, open_recaller

TURNS = [
    ("user", "My tomato seedlings in the greenhouse have yellow leaves, what should I do?"),
    (
        "assistant",
        "Check the watering first: soggy soil starves roots of oxygen. Let the top "
        "inch dry out, then feed with a balanced fertiliser at half strength.",
    ),
    ("user", "I also want to plant basil next to the tomato seedlings in the greenhouse."),
    (
        "assistant",
        "Companion planting works well here: keep them 30 cm apart and pinch the "
        "flower buds so the leaves stay tender.",
    ),
    ("user", "Last week I repaired the greenhouse door hinge with a new bolt."),
    ("assistant", "A drop of oil on the hinge every spring will keep it moving."),
    ("user", "My cousin Dana is visiting in August for the county fair."),
    ("assistant", "August fairs often have vegetable contests, your tomatoes could enter."),
]
SUMMARY = "Summarize what we discussed about my tomato seedlings in the greenhouse."


@pytest.fixture(scope="module")
def spaces(client, engine):
    made = []
    for name in ("chat", "other", "people"):
        space = f"rp-{name}-{uuid.uuid4().hex[:8]}"
        assert client.post("/v1/spaces", json={"id": space}).status_code == 201
        made.append(space)
    at = datetime(2024, 3, 1, tzinfo=UTC)
    turns = [TurnIn(role=r, content=c) for r, c in TURNS]  # type: ignore[arg-type]
    ingestor = Ingestor(engine)
    ingestor.ingest_session(made[0], SessionIn("s1", turns, started_at=at))
    users = [t for t in turns if t.role == "user"]  # the other space: requests, no replies
    ingestor.ingest_session(made[1], SessionIn("s1", users, started_at=at))
    people = [  # two people, both of role user: the reply is the other speaker's next turn
        TurnIn(role="user", content=c, speaker=("Ana", "Ben")[n % 2])
        for n, (_, c) in enumerate(TURNS)
    ]
    ingestor.ingest_session(made[2], SessionIn("s1", people, started_at=at))
    yield made
    for space in made:
        client.delete(f"/v1/spaces/{space}")


def _recall(engine, space, query, k=4, share=None, **filters) -> RecallResponse:
    config = DEFAULT_RECALL_CONFIG
    if share is not None:
        config = merge_overrides(config, {"selection": {"summary_replies": share}}, "recall")
    recaller, close = open_recaller(engine, config)
    try:
        req = RecallRequest(
            query=query, k=k, touch=False, explain=True, filters=RecallFilters(**filters)
        )
        return recaller.recall(space, req)
    finally:
        close()


def _reply_of(memory_id: str) -> str:
    session, n = memory_id.split("#")
    return f"{session}#{int(n) + 1}"


def test_a_summary_brings_the_reply_after_each_of_its_best_requests(engine, spaces):
    resp = _recall(engine, spaces[0], SUMMARY, share=0.5)
    assert resp.intent == "summarization"
    ids = [r.id for r in resp.results]
    assert len(ids) == 4
    first = resp.results[0]
    if first.role == "user":
        assert ids[1] == _reply_of(first.id)
        assert resp.results[1].explain["replies_to"] == first.id
        assert resp.results[1].role == "assistant"
    brought = [r for r in resp.results if r.explain.get("replies_to")]
    assert brought, "no reply was brought"
    for r in brought:
        assert ids.index(r.id) == ids.index(r.explain["replies_to"]) + 1
    off = _recall(engine, spaces[0], SUMMARY, share=0.0)
    assert all("replies_to" not in r.explain for r in off.results)


def test_the_requests_filters_hold_for_replies(engine, spaces):
    resp = _recall(engine, spaces[0], SUMMARY, share=1.0, roles=["user"])
    assert resp.results and all(r.role == "user" for r in resp.results)
    assert all("replies_to" not in r.explain for r in resp.results)


def test_other_intents_are_left_alone(engine, spaces):
    resp = _recall(engine, spaces[0], "What did I plant next to the tomatoes?", share=1.0)
    assert resp.intent != "summarization"
    assert all("replies_to" not in r.explain for r in resp.results)


def test_replies_never_come_from_another_space(engine, spaces):
    # the same turn ids hold replies in the first space, none in the second
    assert any(r.role == "assistant" for r in _recall(engine, spaces[0], SUMMARY, k=8).results)
    resp = _recall(engine, spaces[1], SUMMARY, k=8, share=1.0)
    assert resp.results and all(r.role == "user" for r in resp.results)
    assert all("replies_to" not in r.explain for r in resp.results)


def test_between_two_people_the_reply_is_the_other_speakers_next_turn(engine, spaces):
    resp = _recall(engine, spaces[2], SUMMARY, share=0.5)
    brought = [r for r in resp.results if r.explain.get("replies_to")]
    assert brought
    by_id = {r.id: r for r in resp.results}
    for r in brought:
        asked = by_id[r.explain["replies_to"]]
        assert r.id == _reply_of(asked.id) and r.speaker != asked.speaker

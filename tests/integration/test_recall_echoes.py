"""Step ``echoes`` with real Neo4j: a question turn that restates the query ("Where do I live
now?" for "where does the user live?") never outranks the turn that answers it, in a chat
between two people and between a user and an assistant; with the step off (window 0) the
echo comes first, which is what the step is for."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from pipelines.ingest.service import Ingestor, SessionIn, TurnIn
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.service import RecallRequest, RecallResponse, open_recaller

PEOPLE = [  # (speaker, text) per session
    [
        ("Ana", "Hi Ben! How was the move?"),
        ("Ben", "Exhausting, but the new flat has a balcony over the river."),
        ("Ana", "Sounds lovely. Did the cat settle in?"),
        ("Ben", "She hides under the sofa all day."),
    ],
    [
        ("Ana", "I keep forgetting, where do you live now?"),
        ("Ben", "In Porto, right by the Douro, since March."),
        ("Ana", "I have to visit you there in the summer."),
        ("Ben", "Come in June, the festival of São João is wild."),
    ],
    [
        ("Ana", "My sister lives in Lisbon and works at a bakery."),
        ("Ben", "Lisbon bakeries are the best, pastel de nata every morning."),
    ],
]
ASSISTANT = [
    [
        ("user", "I moved to Porto."),
        ("assistant", "Congratulations on the move! Porto is a beautiful city."),
    ],
    [
        ("user", "Where do I live now?"),
        ("assistant", "Porto, by the river, since last month."),
    ],
    [
        ("user", "What should I cook tonight?"),
        ("assistant", "A tomato risotto with basil is quick and cheap."),
    ],
]


@pytest.fixture(scope="module")
def spaces(client, engine):
    made = {}
    at = datetime(2024, 3, 1, tzinfo=UTC)
    ingestor = Ingestor(engine)
    for name, sessions in (("people", PEOPLE), ("assistant", ASSISTANT)):
        space = f"echo-{name}-{uuid.uuid4().hex[:8]}"
        assert client.post("/v1/spaces", json={"id": space}).status_code == 201
        for n, turns in enumerate(sessions):
            ins = [
                TurnIn(role="user", content=t, speaker=s)
                if name == "people"
                else TurnIn(role=s, content=t)  # type: ignore[arg-type]
                for s, t in turns
            ]
            ingestor.ingest_session(space, SessionIn(f"s{n}", ins, started_at=at + timedelta(n)))
        made[name] = space
    yield made
    for space in made.values():
        client.delete(f"/v1/spaces/{space}")


def _recall(engine, space: str, query: str, window: int | None = None) -> RecallResponse:
    config = DEFAULT_RECALL_CONFIG
    if window is not None:
        config = merge_overrides(config, {"echoes": {"window": window}}, "recall")
    recaller, close = open_recaller(engine, config)
    try:
        return recaller.recall(space, RecallRequest(query=query, k=5, touch=False, explain=True))
    finally:
        close()


def test_in_a_chat_between_people_the_answer_comes_first(engine, spaces) -> None:
    off = [h.id for h in _recall(engine, spaces["people"], "where does Ben live?", 0).results]
    assert off.index("s1#0") < off.index("s1#1")  # without the step the echo leads
    hits = _recall(engine, spaces["people"], "where does Ben live?").results
    ids = [h.id for h in hits]
    assert ids[0] == "s1#1" and ids[1] == "s1#0"
    assert hits[0].explain is not None and hits[1].explain is not None
    assert hits[1].explain["echo"] == {"echo_of_query": True, "answered_by": "s1#1"}
    assert hits[0].score > hits[1].score


def test_the_users_own_question_gives_way_to_the_reply(engine, spaces) -> None:
    off = [h.id for h in _recall(engine, spaces["assistant"], "where does the user live?", 0)
           .results]  # fmt: skip
    assert off[0] == "s1#0"  # the echo
    ids = [h.id for h in _recall(engine, spaces["assistant"], "where does the user live?").results]
    assert ids[0] == "s1#1" and ids.index("s1#0") > ids.index("s1#1")
    assert "s0#0" in ids  # "I moved to Porto." is still among the results


def test_a_question_that_is_no_echo_is_left_alone(engine, spaces) -> None:
    query = "what should I cook tonight for dinner with tomatoes?"
    on = [h.id for h in _recall(engine, spaces["assistant"], query).results]
    off = [h.id for h in _recall(engine, spaces["assistant"], query, 0).results]
    assert "s2#0" in on and "s2#1" in on
    assert on.index("s2#1") < on.index("s2#0") or on == off

"""Step ``standing``: a question brings the turn that gave a standing instruction its words do
not share, matched by the instruction or by the topic it is conditioned on (every query by
default, task-like ones only with ``standing_scope = "task"``); an unrelated question does
not; the statements of another space never come back. Step ``standing_slots``: the best
statement's turn keeps a place among the results."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from pipelines.ingest.service import Ingestor, SessionIn, TurnIn
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.service import RecallRequest, open_recaller

TURNS = [
    ("user", "I'm building a small Flask app to track my household budget."),
    ("assistant", "Great, let's start with the data model for transactions."),
    ("user", "Always format dates in MM/DD/YYYY when I ask about scheduling details."),
    ("assistant", "Got it, I will use that format for dates."),
    ("user", "The transactions table needs an amount, a category and a note column."),
    ("assistant", "Here is a schema with those three columns and an index on category."),
    ("user", "I deployed the first version on Render yesterday and it works."),
]
INSTRUCTION = 2
# Turns that match a sprint-planning question by their words (a crowded space).
SPRINT = [
    ("user", "The next sprint starts Monday; I plan the sprint schedule in the planning meeting."),
    ("user", "For the next sprint I plan a schedule with a review on Friday and a demo."),
    ("user", "I keep the sprint schedule in a shared calendar so I can plan the next sprint."),
    ("user", "Last sprint I planned the schedule too tightly and we slipped two days."),
]


@pytest.fixture(scope="module")
def spaces(client, engine):
    made = []
    for name in ("with", "other", "crowded"):
        space = f"st-{name}-{uuid.uuid4().hex[:8]}"
        assert client.post("/v1/spaces", json={"id": space}).status_code == 201
        made.append(space)
    turns = [TurnIn(role=r, content=c) for r, c in TURNS]  # type: ignore[arg-type]
    at = datetime(2024, 3, 1, tzinfo=UTC)
    ingestor = Ingestor(engine)
    ingestor.ingest_session(made[0], SessionIn("s1", turns, started_at=at))
    others = [t for n, t in enumerate(turns) if n != INSTRUCTION]  # no instruction here
    ingestor.ingest_session(made[1], SessionIn("s1", others, started_at=at))
    sprint = [TurnIn(role=r, content=c) for r, c in SPRINT]  # type: ignore[arg-type]
    ingestor.ingest_session(made[2], SessionIn("s1", turns + sprint, started_at=at))
    yield made
    for space in made:
        client.delete(f"/v1/spaces/{space}")


def _recall(engine, space, query, k=5, selection=None, **standing):
    overrides = {"candidates": standing, "selection": selection or {}}
    config = merge_overrides(DEFAULT_RECALL_CONFIG, overrides, "recall")
    recaller, close = open_recaller(engine, config)
    try:
        req = RecallRequest(query=query, k=k, touch=False, explain=True)
        return recaller.recall(space, req).results
    finally:
        close()


def test_a_task_question_brings_the_standing_instruction(engine, spaces):
    results = _recall(engine, spaces[0], "How should I plan the schedule for the next sprint?")
    hit = next(r for r in results if r.id == f"s1#{INSTRUCTION}")
    assert "standing" in hit.explain["signals"]
    # without the step the instruction's turn has no standing signal
    off = _recall(
        engine,
        spaces[0],
        "How should I plan the schedule for the next sprint?",
        **{"standing_k": 0},
    )
    assert all("standing" not in r.explain["signals"] for r in off)


def test_a_plain_question_reaches_it_through_its_topic(engine, spaces):
    plain = "What is the schedule of my next meetings?"  # not task-like; the topic matches
    served = _recall(engine, spaces[0], plain)
    assert any(r.id == f"s1#{INSTRUCTION}" and "standing" in r.explain["signals"] for r in served)
    scoped = _recall(engine, spaces[0], plain, standing_scope="task")
    assert all("standing" not in r.explain["signals"] for r in scoped)
    unrelated = _recall(engine, spaces[0], "Which columns does the transactions table have?")
    assert all("standing" not in r.explain["signals"] for r in unrelated)


def test_another_spaces_statements_never_come_back(engine, spaces):
    results = _recall(engine, spaces[1], "How should I plan the schedule?", standing_scope="all")
    assert results and all("standing" not in r.explain["signals"] for r in results)


def test_sent_ahead_or_read_in_turn_the_standing_read_gives_the_same_results(engine, spaces):
    query = "How should I plan the schedule for the next sprint?"
    ahead = _recall(engine, spaces[0], query)  # with an executor: sent beside the candidates
    in_turn = _recall(engine, spaces[0], query, concurrent_signals=False)
    assert [(r.id, r.score) for r in ahead] == [(r.id, r.score) for r in in_turn]
    assert any("standing" in r.explain["signals"] for r in in_turn)


def test_the_best_standing_turn_keeps_a_place_among_few_results(engine, spaces):
    query = "How should I plan the schedule for the next sprint?"
    instruction = f"s1#{INSTRUCTION}"
    off = _recall(engine, spaces[2], query, k=3, selection={"standing_slots": 0})
    assert instruction not in [r.id for r in off]  # selection alone leaves it out
    kept = _recall(engine, spaces[2], query, k=3)
    assert [r.id for r in kept] == [off[0].id, off[1].id, instruction]
    assert kept[2].explain["standing_slot"] is True and "standing" in kept[2].explain["signals"]
    # the first result always stays: with k = 1 there is no room
    assert [r.id for r in _recall(engine, spaces[2], query, k=1)] == [off[0].id]

"""With the language rules off (``MNEMOGRAPH_LANGUAGE_RULES=off``) ingest, recall and context
still work and find what was said, against a real Neo4j and the real models: no statement is
taken for a standing instruction by its phrasing, no query gets an intent or a time window from
its words, and every word of a query is searched for."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from pipelines import language

TURNS = [
    ("user", "I'm building a small Flask app to track my household budget."),
    ("assistant", "Great, let's start with the data model for transactions."),
    ("user", "Always format dates in MM/DD/YYYY when I ask about scheduling details."),
    ("assistant", "Got it, I will use that format for dates."),
    ("user", "The transactions table needs an amount, a category and a note column."),
    ("user", "ok thanks"),
    ("user", "I decided to deploy the first version on Render last week and it works."),
]


@pytest.fixture(scope="module")
def rules_off() -> Iterator[None]:
    language.configure("off")
    try:
        yield
    finally:
        language.configure("english")


@pytest.fixture(scope="module")
def space(client, rules_off) -> Iterator[str]:
    space = f"lang-off-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": space}).status_code == 201
    turns = [{"role": r, "speaker": r.title(), "content": c} for r, c in TURNS]
    r = client.post(
        f"/v1/spaces/{space}/sessions",
        json={"session_id": "s1", "started_at": "2024-03-01T10:00:00+00:00", "turns": turns},
    )
    assert r.status_code in (200, 201), r.text
    yield space
    client.delete(f"/v1/spaces/{space}")


def _recall(client, space: str, query: str) -> dict:
    r = client.post(
        f"/v1/spaces/{space}/recall", json={"query": query, "k": 5, "explain": True, "touch": False}
    )
    assert r.status_code == 200, r.text
    return r.json()


def test_recall_finds_what_was_said_without_the_rules(client, space):
    assert language.current() is language.OFF
    body = _recall(client, space, "Which columns does the transactions table have?")
    texts = [r["content"] for r in body["results"]]
    assert texts and "amount, a category and a note" in texts[0], texts


def test_no_instruction_is_read_from_its_phrasing(client, space):
    body = _recall(client, space, "How should I plan the schedule for the next sprint?")
    assert body["results"]
    assert all("standing" not in r["explain"]["signals"] for r in body["results"])


def test_a_time_word_is_searched_not_resolved(client, space):
    body = _recall(client, space, "Where did I deploy last week?")
    assert any("Render" in r["content"] for r in body["results"]), body["results"]


def test_context_assembles_without_the_rules(client, space):
    r = client.post(
        f"/v1/spaces/{space}/context",
        json={"query": "What am I building with Flask?", "context_window": 800},
    )
    assert r.status_code == 200, r.text
    assert "Flask" in r.json()["prompt"]

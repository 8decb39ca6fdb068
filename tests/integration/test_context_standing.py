"""Standing statements lead the facts tier, against a real Neo4j and the real models: an
instruction the user gave once comes back in a small window whatever the query asks, naming
the turn that gave it; another space's instructions never do; ``facts_standing_k`` 0 lets
them compete with the other facts like any fact."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from pipelines.prompt.blocks import parse_records
from tests.integration.test_context_assembly import _context, _new_space
from tests.integration.test_context_facts import SHARE, T0, _family, _in_space, _post_turns

INSTRUCTION = "Always give distances in kilometres when I ask about travel between cities."
QUERY = "Which relatives moved to Lisbon or Oslo, and when?"


def _with_instruction(client, settings: dict) -> str:
    space = _new_space(client, settings)
    _family(client, space)
    _post_turns(client, space, "s3", T0 + timedelta(days=60), [INSTRUCTION])
    return space


@pytest.fixture(scope="module")
def instructed(client) -> Iterator[str]:
    space = _with_instruction(client, SHARE)
    yield space
    client.delete(f"/v1/spaces/{space}")


def _fact_texts(body: dict) -> list[str]:
    return [r.content for r in parse_records(body["sections"].get("facts", ""))]


def test_a_standing_instruction_leads_the_facts_whatever_the_query(client, instructed):
    body = _context(client, instructed, query=QUERY, context_window=700, explain=True)
    texts = _fact_texts(body)
    assert any("kilometres" in t for t in texts), texts
    # it names the turn that gave it, a turn of this space the records do not show
    items = body["report"]["phases"]["facts"]["items"]
    standing = [i for i in items if i["selected"] and "#s" in i["id"]]  # "<memory>#s<n>"
    included = body["included_ids"]
    assert len(standing) == 1 and standing[0]["source"] in included["facts"]
    assert _in_space(client, instructed, included["facts"])
    assert "kilometres" not in body["sections"]["recalled"]
    # the other facts still follow it, as many as the share holds
    assert len(texts) >= 2 and body["report"]["total_tokens"] <= body["report"]["budget"]["limit"]


def test_another_spaces_instruction_never_comes_back(client, instructed):
    other = _new_space(client, SHARE)
    try:
        _family(client, other)
        body = _context(client, other, query=QUERY, context_window=700)
        assert not any("kilometres" in t for t in body["prompt"].splitlines())
        assert _in_space(client, other, body["included_ids"].get("facts", []))
    finally:
        client.delete(f"/v1/spaces/{other}")


def test_without_the_lead_an_unrelated_instruction_competes_like_any_fact(client):
    space = _with_instruction(client, {"assembly": {**SHARE["assembly"], "facts_standing_k": 0}})
    try:
        body = _context(client, space, query=QUERY, context_window=700)
        texts = _fact_texts(body)
        assert texts and not any("kilometres" in t for t in texts)
    finally:
        client.delete(f"/v1/spaces/{space}")

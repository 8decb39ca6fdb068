"""Facts as the compact tier of a staged context, against a real Neo4j and the real models: a
named stage in a small window shows facts of turns its phases leave out, within their share and
before the other sections, each naming its turn; another space's facts never come back;
``as_of`` hides facts of later turns; the ``facts`` ablation and ``facts_share`` 0 switch the
tier off."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from benchmarks.context_bench import assembler_variants
from pipelines.assemble.request import ContextRequest
from pipelines.assemble.service import Assembler
from pipelines.prompt.blocks import parse_records
from tests.integration.test_context_assembly import DENSE_ENOUGH, _context, _new_space
from tests.integration.test_context_facts import FIRST, QUERY, RELATIVES, T0, _family, _in_space

STAGES = ("before", "after")
"""The stage labels of the family's two sessions."""
STAGED = {"assembly": {**DENSE_ENOUGH, "facts_share": 0.3}}
"""Dense enough for stages, with a facts share that shows a few facts in a small window."""
WINDOW = 1200


@pytest.fixture(scope="module")
def staged_family(client) -> Iterator[str]:
    space = _new_space(client, STAGED)
    _family(client, space, stages=STAGES)
    yield space
    client.delete(f"/v1/spaces/{space}")


def _staged(client, space: str, **body) -> dict:
    fields = {"query": QUERY, "context_window": WINDOW, "stage": STAGES[0], **body}
    out = _context(client, space, **fields)
    assert out["report"]["mode"] == "staged", out["report"]["mode_reason"]
    return out


def test_a_named_stage_in_a_small_window_shows_facts_of_turns_its_phases_leave_out(
    client, staged_family
):
    body = _staged(client, staged_family, explain=True)
    sections, included, report = body["sections"], body["included_ids"], body["report"]
    facts = report["phases"]["facts"]
    assert report["phases"]["current_stage"]["dropped"] > 0  # the phases leave turns out
    assert facts["included"] >= 2 and facts["turns"] == len(included["facts"])
    assert sections["facts"].startswith("## Facts\n<memories>")
    prompt = body["prompt"]
    assert prompt.index("## Facts") < prompt.index("## Current stage")
    assert prompt.index("## Facts") < prompt.index("## Related prior context")
    # each fact names a turn of this space that no other section shows
    assert _in_space(client, staged_family, included["facts"])
    shown = set(included["current_stage"]) | set(included["related_prior"])
    assert not set(included["facts"]) & shown
    chosen = [i for i in facts["items"] if i["selected"]]
    assert {i["source"] for i in chosen} >= set(included["facts"])
    texts = [r.content for r in parse_records(sections["facts"])]
    assert texts and all(t.startswith("My ") and " moved to " in t for t in texts)
    # the facts keep to their share, whole, and cut no section; the prompt fits its budget
    assert report["tokens"]["facts"] <= facts["share_tokens"]
    assert "[…]" not in sections["facts"] and body["report"]["warning"] is None
    assert report["budget"]["fits"] is True
    assert report["total_tokens"] <= report["budget"]["limit"]


def test_another_spaces_facts_never_come_back_to_a_staged_context(client, staged_family):
    other = _new_space(client, STAGED)
    try:
        _family(client, other, city_suffix="-on-Sea", stages=STAGES)
        body = _staged(client, staged_family, query="Who moved to Lisbon-on-Sea?")
        assert body["sections"]["facts"]
        assert not any("-on-Sea" in text for text in body["sections"].values())
        assert _in_space(client, staged_family, body["included_ids"]["facts"])
    finally:
        client.delete(f"/v1/spaces/{other}")


def test_as_of_hides_facts_of_later_turns_in_a_staged_context(client, staged_family):
    # halfway through the second session: both stages exist, its last five turns do not yet
    halfway = (T0 + timedelta(days=30, minutes=4, seconds=30)).isoformat()
    later = [city for _, _, city in RELATIVES[FIRST + 5 :]]
    now = _staged(client, staged_family, stage=STAGES[1])
    assert any(city in now["prompt"] for city in later)
    body = _staged(client, staged_family, stage=STAGES[1], as_of=halfway)
    assert body["included_ids"]["facts"]
    assert _in_space(client, staged_family, body["included_ids"]["facts"])
    assert not any(city in body["prompt"] for city in later)


def test_the_ablation_switches_the_staged_tier_off(engine, staged_family):
    request = ContextRequest(query=QUERY, context_window=WINDOW, stage=STAGES[0], explain=True)
    with ThreadPoolExecutor(max_workers=4) as pool:
        assembler = Assembler(engine, read_ahead=pool)
        on = assembler.assemble(staged_family, request)
        off = assembler.assemble(staged_family, request, assembler_variants()["assembler-no-facts"])
    assert on.included_ids["facts"] and "## Facts" in on.prompt
    report = off.report.as_dict()
    assert report["mode"] == "staged" and report["ablate"] == ["facts"]
    assert "## Facts" not in off.prompt and "facts" not in off.sections
    assert off.included_ids.get("facts", []) == [] and "facts" not in report["phases"]
    # the phases take the room the facts would have had
    assert sum(off.report.tokens[k] for k in ("current_stage", "related_prior")) > sum(
        on.report.tokens[k] for k in ("current_stage", "related_prior")
    )


def test_a_space_can_switch_the_staged_tier_off(client):
    space = _new_space(client, {"assembly": {**DENSE_ENOUGH, "facts_share": 0}})
    try:
        _family(client, space, stages=STAGES)
        body = _staged(client, space, explain=True)
        assert "## Facts" not in body["prompt"] and body["included_ids"].get("facts", []) == []
        assert "facts" not in body["report"]["phases"]
        assert body["sections"]["current_stage"].startswith("## Current stage")
    finally:
        client.delete(f"/v1/spaces/{space}")

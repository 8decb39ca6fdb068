"""Facts as the compact tier of a flat context, against a real Neo4j and the real models:
ingest embeds them; a small window shows facts of turns its records leave out, each naming its
turn; another space's facts never come back; ``as_of`` hides facts of later turns; a space can
switch the tier off; the ``fact_vectors`` job fills in facts stored without an embedding, once,
in its own space only."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import pytest

from pipelines.consolidate.runner import run_job
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG
from pipelines.prompt.blocks import parse_records
from tests.cypher import statements
from tests.integration.test_consolidate_jobs import BIOGRAPHY, ingest
from tests.integration.test_context_assembly import _context, _new_space

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
FILLER = (
    "We talked for a long while about the weather, the food, the neighbours, the trains that "
    "were late again and everything else that happened since the last time we met."
)
NAMES = [
    "Marta",
    "Jonas",
    "Greta",
    "Pavel",
    "Ines",
    "Tomas",
    "Lena",
    "Rafael",
    "Emil",
    "Nora",
    "Hugo",
    "Clara",
    "Oskar",
    "Vera",
    "Luca",
    "Mira",
    "Anton",
    "Elsa",
    "Felix",
    "Ida",
    "Jakob",
    "Lotte",
    "Milan",
    "Rosa",
    "Sven",
    "Tilda",
    "Viktor",
    "Wanda",
    "Xaver",
    "Yara",
]
CITIES = [
    "Lisbon",
    "Oslo",
    "Vienna",
    "Prague",
    "Porto",
    "Krakow",
    "Munich",
    "Seville",
    "Bergen",
    "Dublin",
    "Lyon",
    "Turin",
    "Gdansk",
    "Tallinn",
    "Riga",
    "Vilnius",
    "Ghent",
    "Bruges",
    "Utrecht",
    "Basel",
    "Graz",
    "Brno",
    "Split",
    "Zadar",
    "Malmo",
    "Aarhus",
    "Tampere",
    "Cork",
    "Galway",
    "Nantes",
]
KIN = ("cousin", "brother", "aunt", "uncle", "sister", "nephew")
RELATIVES = [
    (KIN[n % len(KIN)], name, city)
    for n, (name, city) in enumerate(zip(NAMES, CITIES, strict=True))
]
FIRST = 20
"""Relatives of the first session; the rest come a month later."""


def _post_turns(
    client, space: str, sid: str, start: datetime, texts: list[str], stage: str | None = None
) -> None:
    r = client.post(
        f"/v1/spaces/{space}/sessions",
        json={
            "session_id": sid,
            **({"stage": stage} if stage else {}),
            "started_at": start.isoformat(),
            "turns": [
                {
                    "role": "user",
                    "speaker": "Ann",
                    "content": text,
                    "time": (start + timedelta(minutes=i)).isoformat(),
                }
                for i, text in enumerate(texts)
            ],
        },
    )
    assert r.status_code == 201, r.text


def _family(
    client, space: str, city_suffix: str = "", stages: tuple[str, str] | None = None
) -> None:
    """Two sessions a month apart, one relative per turn (a fact each), long enough that a
    small window cannot hold them whole; ``stages``: the sessions' stage labels."""
    turns = [
        f"My {rel} {name} moved to {city}{city_suffix} in {1990 + n}. {FILLER}"
        for n, (rel, name, city) in enumerate(RELATIVES)
    ]
    first, second = stages or (None, None)
    _post_turns(client, space, "s1", T0, turns[:FIRST], first)
    _post_turns(client, space, "s2", T0 + timedelta(days=30), turns[FIRST:], second)


#: At 700 tokens the default share holds one or two facts; a larger share makes the section's
#: behaviour visible with a small conversation.
SHARE = {"assembly": {"facts_share": 0.3}}


@pytest.fixture(scope="module")
def family(client) -> Iterator[str]:
    space = _new_space(client, SHARE)
    _family(client, space)
    yield space
    client.delete(f"/v1/spaces/{space}")


def _in_space(client, space: str, ids: list[str]) -> bool:
    """Whether every one of ``ids`` is a memory of ``space``."""
    return all(
        client.get(f"/v1/spaces/{space}/memories/{quote(i, safe='')}").status_code == 200
        for i in ids
    )


QUERY = "Where did my relatives move to?"


def test_ingest_embeds_the_facts_of_the_embedded_categories(engine, space):
    ingest(engine, space, BIOGRAPHY)
    rows = statements(engine.store).read("consolidate/fact_embeddings", space=space)
    assert any(r["embedded"] for r in rows)
    embedded = DEFAULT_INGEST_CONFIG.facts.embedded_categories
    for r in rows:  # standing statements (ids "<memory>#s<n>") are always embedded
        assert r["embedded"] == (r["category"] in embedded or "#s" in r["id"]), r


def test_small_window_shows_facts_of_turns_left_out(client, family):
    body = _context(client, family, query=QUERY, context_window=700, explain=True)
    sections, included, report = body["sections"], body["included_ids"], body["report"]
    assert report["mode"] == "flat"
    facts = report["phases"]["facts"]
    assert facts["included"] >= 2 and facts["turns"] == len(included["facts"])
    assert sections["facts"].startswith("## Facts\n<memories>")
    assert body["prompt"].index("## Facts") < body["prompt"].index("## Recalled memories")
    # each fact names a turn of this space that the records do not show
    assert _in_space(client, family, included["facts"])
    assert not set(included["facts"]) & set(included["recalled"])
    shown = {r.content for r in parse_records(sections["facts"])}
    chosen = [i for i in facts["items"] if i["selected"]]
    assert {i["source"] for i in chosen} >= set(included["facts"])
    assert all(text.startswith("My ") and " moved to " in text for text in shown)
    assert 0 < report["tokens"]["facts"] <= facts["share_tokens"]
    # the records say how many recalled memories they left out; the prompt fits its budget
    assert "left out to fit the context budget" in sections["recalled"]
    assert report["total_tokens"] <= report["budget"]["limit"]
    assert math.ceil(len(body["prompt"]) / 3) <= 700


def test_large_window_needs_no_facts(client, family):
    body = _context(client, family, query=QUERY, context_window=8000, explain=True)
    # every recalled turn fits whole: no fact adds a turn, the section is left out
    assert body["sections"].get("facts", "") == ""
    assert "## Facts" not in body["prompt"]
    assert body["included_ids"].get("facts", []) == []
    assert body["report"]["phases"]["facts"]["selected"] == 0


def test_another_spaces_facts_never_come_back(client, family):
    other = _new_space(client, SHARE)
    try:
        _family(client, other, city_suffix="-on-Sea")
        body = _context(client, family, query="Who moved to Lisbon-on-Sea?", context_window=700)
        assert body["sections"]["facts"]
        assert not any("-on-Sea" in text for text in body["sections"].values())
        assert _in_space(client, family, body["included_ids"]["facts"])
    finally:
        client.delete(f"/v1/spaces/{other}")


def test_as_of_hides_facts_of_later_turns(client, family):
    before_second = (T0 + timedelta(days=10)).isoformat()
    body = _context(client, family, query=QUERY, context_window=700, as_of=before_second)
    later = [city for _, _, city in RELATIVES[FIRST:]]
    assert body["included_ids"]["facts"]
    assert not any(city in body["prompt"] for city in later)


def test_a_space_can_switch_the_tier_off(client):
    space = _new_space(client, {"assembly": {"facts_share": 0}})
    try:
        _family(client, space)
        body = _context(client, space, query=QUERY, context_window=700, explain=True)
        assert "## Facts" not in body["prompt"] and body["included_ids"].get("facts", []) == []
        assert "facts" not in body["report"]["phases"]
    finally:
        client.delete(f"/v1/spaces/{space}")


def test_fact_vectors_job_fills_missing_embeddings_once_in_its_space(engine, space, client):
    other = _new_space(client)
    try:
        ingest(engine, space, BIOGRAPHY)
        ingest(engine, other, BIOGRAPHY)
        db = statements(engine.store)
        for s in (space, other):
            assert db.write("consolidate/drop_fact_embeddings", space=s)[0]["dropped"] > 0
        dry = run_job(engine, space, "fact_vectors", dry_run=True)
        assert dry.counts["pending"] > 0 and not dry.counts.get("filled")
        run = run_job(engine, space, "fact_vectors")
        assert run.status == "ok", run
        assert run.counts["filled"] == run.counts["pending"] == dry.counts["pending"]
        embedded = DEFAULT_INGEST_CONFIG.facts.embedded_categories
        rows = db.read("consolidate/fact_embeddings", space=space)
        assert all(r["embedded"] for r in rows if r["category"] in embedded)
        again = run_job(engine, space, "fact_vectors")
        assert again.counts["pending"] == 0 and not again.counts.get("filled")
        # the other space was not touched (its standing preferences kept their embeddings)
        rows = db.read("consolidate/fact_embeddings", space=other)
        assert not any(r["embedded"] for r in rows if r["category"] in embedded - {"preference"})
    finally:
        client.delete(f"/v1/spaces/{other}")

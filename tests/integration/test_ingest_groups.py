"""A multi-session call is written in groups of whole sessions, one transaction per group: the
graph and each session's result are those of sending the sessions one call at a time, and a
session that repeats an id of its group meets what the group stored."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pipelines.engine import Engine
from pipelines.errors import Conflict
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG
from pipelines.ingest.service import IngestOptions, Ingestor, SessionIn, TurnIn
from tests.cypher import statements

DAY0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
GAP = timedelta(days=40)  # long enough apart for separate time-gap stages

TEXTS = (
    ("Caroline", "I moved to Boston last May and joined the Harbor Rowing Club."),
    ("Melanie", "Boston suits you! Did Caroline's sister Anna visit yet?"),
    ("Caroline", "Anna came in June; we rowed on the Charles River with the club."),
)


def sessions() -> list[SessionIn]:
    out = []
    for n in range(3):
        start = DAY0 + n * GAP
        turns = [
            TurnIn("user", f"{text} (week {n})", speaker=who, time=start + timedelta(minutes=i))
            for i, (who, text) in enumerate(TEXTS)
        ]
        out.append(SessionIn(f"s{n}", turns, started_at=start))
    return out


def ingestor(engine: Engine, group_turns: int) -> Ingestor:
    return Ingestor(engine, DEFAULT_INGEST_CONFIG.model_copy(update={"group_turns": group_turns}))


@pytest.fixture
def spaces(client: TestClient) -> Iterator[list[str]]:
    ids = [f"t-{uuid.uuid4().hex[:10]}" for _ in range(2)]
    for sid in ids:
        assert client.post("/v1/spaces", json={"id": sid}).status_code == 201
    yield ids
    for sid in ids:
        client.delete(f"/v1/spaces/{sid}")


def graph(engine: Engine, space: str) -> dict[str, Any]:
    """What ingest wrote, comparable across spaces."""
    tests_only = statements(engine.store)
    written = dict(tests_only.read("ingest/written", space=space)[0])
    state = tests_only.read("ingest/graph_state", space=space)[0]
    written["entities"] = sorted(
        (e["key"], e["mentions"], e["memories"], e["n"]) for e in state["entities"]
    )
    written["edges"] = sorted((e["a"], e["b"], e["weight"]) for e in state["edges"])
    return written


def test_one_transaction_per_group_writes_what_one_call_per_session_writes(
    engine: Engine, spaces: list[str]
) -> None:
    grouped, single = spaces
    options = IngestOptions(gate=False)
    together = ingestor(engine, 512).ingest_sessions(grouped, sessions(), options)
    apart = [ingestor(engine, 512).ingest_session(single, s, options) for s in sessions()]
    assert [r.counts for r in together] == [r.counts for r in apart]
    assert [r.stage_ids for r in together] == [r.stage_ids for r in apart]
    assert all(r.counts["memories"] == 3 for r in together)
    written = graph(engine, grouped)
    assert written["entities"] and written["edges"]
    assert len({x["start"] for x in written["sessions"]}) == 3  # three stages
    assert written == graph(engine, single)
    assert len(graph(engine, grouped)["next"]) == 6  # within each session, none across


def test_a_repeated_session_or_memory_id_meets_what_its_group_stored(
    engine: Engine, space: str
) -> None:
    first, again = sessions()[0], sessions()[0]
    results = ingestor(engine, 512).ingest_sessions(space, [first, again], IngestOptions())
    assert [i.decision for i in results[0].items] == ["stored"] * 3
    assert [i.decision for i in results[1].items] == ["unchanged"] * 3

    changed = sessions()[1]
    clash = SessionIn("other", [TurnIn("user", "Different words.", id=f"{changed.session_id}#0")])
    with pytest.raises(Conflict) as conflict:
        ingestor(engine, 512).ingest_sessions(space, [changed, clash], IngestOptions())
    assert conflict.value.field == "turns.0.id"
    kept = {
        m["id"] for m in statements(engine.store).read("ingest/written", space=space)[0]["memories"]
    }
    assert {"s1#0", "s1#1", "s1#2"} <= kept  # the first session's group was committed
    assert "other#0" not in kept

"""Issue 4: a speaker named in the query lifts the conversations that speaker took part in.

Two conversations share one space. Both hold a turn about researching adoption agencies, said by
someone else than the speaker the query names; only the first conversation includes Caroline.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from pipelines.ingest.service import Ingestor, SessionIn, TurnIn
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.service import Recaller, RecallRequest

QUERY = "What did Caroline research?"

WITH_CAROLINE = [  # (speaker, content)
    ("Caroline", "Morning! The coffee here is great."),
    ("Melanie", "You told me last week about researching adoption agencies for months."),
    ("Caroline", "Yes, and I finally picked one."),
]
WITHOUT_CAROLINE = [
    ("Joanna", "I spent months researching adoption agencies."),
    ("Nate", "That sounds like a lot of work."),
]
EVERYONE = [  # a space whose only session includes Caroline: nothing to separate
    ("Caroline", "Good morning."),
    ("Melanie", "I spent months researching adoption agencies."),
]


def _session(sid: str, rows: list[tuple[str, str]], day: int) -> SessionIn:
    turns = [TurnIn(role="user", content=c, speaker=s) for s, c in rows]
    return SessionIn(sid, turns, started_at=datetime(2023, 5, day, 10, tzinfo=UTC))


@pytest.fixture(scope="module")
def two_conversations(client, engine):
    shared, alone = f"rs-{uuid.uuid4().hex[:8]}", f"rt-{uuid.uuid4().hex[:8]}"
    for sid in (shared, alone):
        assert client.post("/v1/spaces", json={"id": sid}).status_code == 201
    ingestor = Ingestor(engine)
    ingestor.ingest_sessions(
        shared, [_session("c1", WITH_CAROLINE, 1), _session("c2", WITHOUT_CAROLINE, 2)]
    )
    ingestor.ingest_sessions(alone, [_session("c1", EVERYONE, 1)])
    yield {"shared": shared, "alone": alone}
    for sid in (shared, alone):
        client.delete(f"/v1/spaces/{sid}")


def _ranked(engine, space: str, factor: float) -> tuple[list[str], dict[str, dict]]:
    config = merge_overrides(
        DEFAULT_RECALL_CONFIG, {"fusion": {"speaker_session_boost_factor": factor}}, "recall"
    )
    resp = Recaller(engine, config).recall(
        space, RecallRequest(query=QUERY, k=10, touch=False, explain=True)
    )
    return [h.id for h in resp.results], {h.id: (h.explain or {}) for h in resp.results}


def test_the_named_speakers_conversation_ranks_first(engine, two_conversations):
    space = two_conversations["shared"]
    ids, explain = _ranked(engine, space, DEFAULT_RECALL_CONFIG.fusion.speaker_session_boost_factor)
    assert ids.index("c1#1") < ids.index("c2#0")
    lifted = {i for i, e in explain.items() if "speaker_session" in e.get("boosts", {})}
    assert lifted == {i for i in ids if i.startswith("c1#")}
    # The control: without the boost the other conversation's closer wording wins, so the
    # order above is the boost's doing.
    ids_off, explain_off = _ranked(engine, space, 1.0)
    assert ids_off.index("c2#0") < ids_off.index("c1#1")
    assert not any("speaker_session" in e.get("boosts", {}) for e in explain_off.values())


def test_no_lift_where_every_session_includes_the_speaker(engine, two_conversations):
    _, explain = _ranked(
        engine,
        two_conversations["alone"],
        DEFAULT_RECALL_CONFIG.fusion.speaker_session_boost_factor,
    )
    assert explain
    assert not any("speaker_session" in e.get("boosts", {}) for e in explain.values())

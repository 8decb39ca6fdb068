"""Speakers exported under account names (numbers, handles) are found by the names people
call them: learned from the turns that address them in two-person sessions, and the given
name inside a handle. The query's speaker then lifts that speaker's turns as it would for
an exported first name."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from pipelines.ingest.service import Ingestor, SessionIn, TurnIn
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.service import Recaller, RecallRequest

CARO, MEL = "+1 555 0100", "+1 555 0199"

SESSIONS = [  # (speaker, content) per session
    [
        (MEL, "Hey Caroline! How was the pottery class?"),
        (CARO, "Hi Mel, it was lovely. I made a blue bowl."),
        (MEL, "I went hiking near the lake with my kids."),
    ],
    [
        (CARO, "Hey Mel! Guess what, I signed up for a painting course."),
        (MEL, "Thanks for telling me, Caroline! I am painting a sunset myself."),
        (CARO, "I painted a sunset too, with orange and purple."),
    ],
    [
        (MEL, "Hi Caroline, did you finish the sunset painting?"),
        (CARO, "Not yet, I am still working on the sky."),
    ],
]


@pytest.fixture(scope="module")
def space(client, engine):
    sid = f"rn-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": sid}).status_code == 201
    sessions = [
        SessionIn(
            f"s{i}",
            [TurnIn(role="user", content=c, speaker=s) for s, c in rows],
            started_at=datetime(2023, 5, i + 1, 10, tzinfo=UTC),
        )
        for i, rows in enumerate(SESSIONS)
    ]
    Ingestor(engine).ingest_sessions(sid, sessions)
    yield sid
    client.delete(f"/v1/spaces/{sid}")


def test_the_names_speakers_are_called_by_are_learned(engine, space):
    forms = Recaller(engine, DEFAULT_RECALL_CONFIG)._profile(space).forms
    assert forms["caroline"] == CARO
    assert forms["mel"] == MEL
    assert forms[CARO.casefold()] == CARO


def test_a_learned_name_lifts_that_speakers_turns(engine, space):
    resp = Recaller(engine, DEFAULT_RECALL_CONFIG).recall(
        space, RecallRequest(query="What did Caroline paint?", k=5, touch=False, explain=True)
    )
    top = resp.results[0]
    assert top.speaker == CARO, [(h.id, h.speaker) for h in resp.results]
    assert "speaker" in (top.explain or {}).get("boosts", {}), top.explain

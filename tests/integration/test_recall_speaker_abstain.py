"""The speaker-match abstention rule in a space shared by several conversations: it weighs
the named speaker's share of the best matches from the conversations that speaker took part
in, so other people's conversations about the same topic neither trigger it nor hide it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from pipelines.ingest.service import Ingestor, SessionIn, TurnIn
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.service import RecallRequest, open_recaller

# Bob talks about his pottery class; Ann about her job.
OWN = [
    ("Bob", f"In my pottery class this week I {what}.")
    for what in (
        "made a small bowl on the wheel",
        "glazed the bowl I made last week",
        "learned to center clay on the wheel",
        "fired my first mug in the kiln",
        "made a vase that cracked in the kiln",
        "trimmed the foot of a bowl",
        "painted a plate with blue glaze",
        "threw six cylinders in a row",
    )
] + [
    ("Ann", text)
    for text in (
        "Work was busy, we shipped the new billing page.",
        "My manager asked me to lead the next release.",
        "I spent the afternoon fixing flaky tests.",
        "We hired two engineers for my team.",
    )
]
# Other people's conversations, closer still to the question's words.
OTHERS = {
    ("Cy", "Di"): "I made a bowl in my pottery class",
    ("Ed", "Fay"): "I made a mug in my pottery class",
}


@pytest.fixture(scope="module")
def space(client, engine):
    space = f"spk-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": space}).status_code == 201
    at = datetime(2024, 3, 1, tzinfo=UTC)
    ingestor = Ingestor(engine)
    own = [
        TurnIn(role="assistant" if who == "Bob" else "user", content=text, speaker=who)
        for who, text in OWN
    ]
    ingestor.ingest_session(space, SessionIn("a1", own, started_at=at))
    for n, ((first, second), text) in enumerate(OTHERS.items()):
        turns = [
            TurnIn(
                role="user" if i % 2 == 0 else "assistant",
                content=f"{text}, day {i}.",
                speaker=first if i % 2 == 0 else second,
            )
            for i in range(8)
        ]
        ingestor.ingest_session(space, SessionIn(f"o{n}", turns, started_at=at))
    yield space
    client.delete(f"/v1/spaces/{space}")


def _ask(engine, space, query):
    recaller, close = open_recaller(engine, DEFAULT_RECALL_CONFIG)
    try:
        return recaller.recall(space, RecallRequest(query=query, k=10, touch=False))
    finally:
        close()


def test_the_named_speakers_own_conversation_decides(engine, space):
    out = _ask(engine, space, "What did Bob make in his pottery class?")
    assert out.abstain_reason != "speaker_mismatch"
    assert any(r.speaker == "Bob" for r in out.results)


def test_content_said_by_the_other_party_still_abstains(engine, space):
    out = _ask(engine, space, "What did Ann make in her pottery class?")
    assert out.abstain and out.abstain_reason == "speaker_mismatch"

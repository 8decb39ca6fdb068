"""Any size goes in: an import larger than one request, split by the SDK's bulk helper
against a live server whose work limit is lowered (8 embedding inputs a request): several
requests per session, a re-run storing nothing, an interrupted run resumed, a 422 on a short
estimate split again, and a session arriving in parts numbered and linked as one."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from mnemograph.client import AsyncClient, Client, bulk
from tests.cypher import statements
from tests.integration.conftest import _serve

LONG = " ".join(
    f"Paragraph {i} of the design notes says the cache keeps {i} entries." for i in range(40)
)


def history(tag: str) -> list[dict[str, Any]]:
    """Two sessions: 14 short turns (no ids) and one long turn with chunks, then 6 with ids."""
    first = [
        {
            "role": "user" if i % 2 else "assistant",
            "speaker": "Ana",
            "content": f"{tag} note {i}: we ship version {i} on day {i}.",
        }
        for i in range(14)
    ]
    first.insert(7, {"role": "user", "speaker": "Ana", "content": LONG})
    second = [{"id": f"{tag}-b{i}", "role": "user", "content": f"{tag} second session line {i}."}
              for i in range(6)]  # fmt: skip
    return [
        {"session_id": f"{tag}-s1", "started_at": "2024-03-01T10:00:00Z", "turns": first},
        {"session_id": f"{tag}-s2", "started_at": "2024-03-02T10:00:00Z", "turns": second},
    ]


@pytest.fixture(scope="module")
def small(engine) -> Iterator[str]:
    """A live server admitting at most 8 texts embedded per request."""
    settings = Settings(neo4j_uri=engine.store.config.uri, ingest_max_embedding_inputs=8)
    yield from _serve(settings, engine)


@pytest.fixture
def space(small) -> Iterator[str]:
    sid = f"bulk-{uuid.uuid4().hex[:8]}"
    with Client(small) as mg:
        mg.create_space(sid)
        yield sid
        mg.delete_space(sid)


def test_the_server_tells_its_limits(small):
    with Client(small) as mg:
        limits = mg.limits()
    assert limits.max_embedding_inputs == 8
    assert limits.max_items_per_request == 1_000 and limits.embedding_window > 0


def test_a_history_in_several_requests_then_a_rerun_stores_nothing(small, space, engine):
    sessions = history("h")
    with Client(small) as mg:
        seen: list[int] = []
        first = mg.ingest_sessions(space, sessions, progress=seen.append)
        again = mg.ingest_sessions(space, sessions)
    assert first.requests >= 4 and sum(seen) == 21
    assert first.decisions == {"stored": 21} and first.counts["memories"] == 21
    assert again.decisions == {"unchanged": 21} and again.counts.get("memories", 0) == 0
    chain = statements(engine.store).read("ingest/session_chain", space=space, session_id="h-s1")
    assert [r["turn_index"] for r in chain] == list(range(15))  # one numbering across requests
    assert [r["id"] for r in chain] == [f"h-s1#{i}" for i in range(15)]
    assert all(r["next"] == [chain[i + 1]["id"]] for i, r in enumerate(chain[:-1]))
    assert chain[-1]["next"] == []


def test_an_interrupted_import_resumes(small, space, tmp_path: Path):
    sessions = history("r")
    state = tmp_path / "state"
    acknowledged: list[int] = []

    def stop_after_two(turns: int) -> None:
        acknowledged.append(turns)
        if len(acknowledged) == 2:
            raise KeyboardInterrupt

    with Client(small) as mg:
        with pytest.raises(KeyboardInterrupt):
            mg.ingest_sessions(space, sessions, resume=bulk.Resume.open(state),
                               progress=stop_after_two)  # fmt: skip
        resumed = mg.ingest_sessions(space, sessions, resume=bulk.Resume.open(state))
        counts = mg.get_space(space).counts
    assert resumed.skipped == 2 and resumed.decisions == {"stored": 21 - sum(acknowledged)}
    assert counts is not None and counts.memories == 21


def test_a_short_estimate_is_split_again(small, space):
    """The client believes the server takes 1,000 inputs: the server's 422 splits the batch."""
    roomy = bulk.Limits(max_embedding_inputs=1_000)
    with Client(small) as mg:
        out = bulk.ingest_sessions(mg, space, history("e"), limits=roomy)
    assert out.resplits >= 1 and out.decisions == {"stored": 21}


def test_the_cli_imports_in_parts_reruns_and_resumes(small, space, tmp_path: Path, capsys):
    from app.cli import main

    lines = [{**t, "session": s["session_id"]} for s in history("c") for t in s["turns"]]
    chat = tmp_path / "chat.jsonl"
    chat.write_text("\n".join(json.dumps(m) for m in lines))
    argv = ["ingest", str(chat), "--space", space, "--quiet", "--json", "--url", small]
    state = ["--resume", str(tmp_path / "state")]
    runs = []
    for extra in ([], [], state, state):
        assert main([*argv, *extra]) == 0
        runs.append(json.loads(capsys.readouterr().out))
    first, again, recorded, resumed = runs
    assert first["requests"] >= 4 and first["stored"] == 21 and first["memories"] == 21
    assert again["unchanged"] == 21 and "stored" not in again and "memories" not in again
    assert recorded["unchanged"] == 21 and recorded["skipped_requests"] == 0
    assert resumed["requests"] == 0 and resumed["skipped_requests"] == recorded["requests"]


def test_the_async_client_and_free_memories_split_too(small, space):
    memories = [{"content": f"Decision {i}: the release train leaves every {i} days."}
                for i in range(10)] + [{"content": LONG, "kind": "doc"}]  # fmt: skip

    async def sessions() -> bulk.BulkResult:
        async with AsyncClient(small) as mg:
            return await mg.ingest_sessions(space, history("a"))

    async_out = asyncio.run(sessions())
    with Client(small) as mg:
        first = mg.ingest_memories(space, memories)
        again = mg.ingest_memories(space, memories)
    assert async_out.requests >= 4 and async_out.decisions == {"stored": 21}
    assert first.requests >= 2 and first.decisions == {"stored": 11}
    assert again.decisions == {"unchanged": 11}

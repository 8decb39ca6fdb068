"""A small demo space for Neo4j Browser: a few months of one person's conversations with an
assistant, ingested through the HTTP API, then consolidated by the jobs a scheduler would run.

It is written to exercise every query of the Browser guide: gaps in time make several stages,
people, places and companies make entities that co-occur, a move, a new job and a favourite
colour that changes twice give the supersession job chains to build, and a restated turn gives
the merge job a duplicate.
Used by ``make browser-check`` and by the integration tests of the guide; it is fiction, not a
benchmark dataset.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

DEMO_SPACE = "demo"
# The memory the screenshot of a stage graph selects: a superseded one, to show its properties.
SHOWCASE_CAPTION = "Maya: My favourite colour is blue."
# Jobs run after ingesting, in the order a full consolidation pass runs them.
DEMO_JOBS = ("merge", "supersede", "decay", "communities", "schemas", "upkeep")

_USER, _BOT = "Maya", "Mnemo"

# (session id, start, [(speaker, text), ...]); turns are a minute apart.
_SESSIONS: list[tuple[str, datetime, list[tuple[str, str]]]] = [
    (
        "lisbon-1",
        datetime(2024, 1, 8, 18, 0),
        [
            (_USER, "I live in Lisbon."),
            (_USER, "I work at Atlas Robotics on warehouse robots."),
            (_BOT, "Lisbon sounds lovely. What do you do at Atlas Robotics?"),
            (_USER, "I write the navigation software. My manager Ines Costa is great."),
            (_USER, "My favourite colour is blue."),
            (_USER, "On Saturday I went hiking in Sintra with Tomas Ribeiro."),
            (_BOT, "Did you visit the Pena Palace in Sintra?"),
            (_USER, "Yes, Tomas Ribeiro and I saw the Pena Palace at sunset."),
        ],
    ),
    (
        "lisbon-2",
        datetime(2024, 1, 11, 19, 30),
        [
            (_USER, "I went to the climbing gym with Tomas Ribeiro yesterday and it was great."),
            (_USER, "Ines Costa asked me to present the robot planner at Atlas Robotics."),
            (_BOT, "Good luck with the presentation for Ines Costa."),
            (_USER, "I am learning Portuguese with a tutor in Lisbon."),
        ],
    ),
    (
        "porto-1",
        datetime(2024, 3, 18, 20, 0),
        [
            (_USER, "Big news: I moved to Porto."),
            (_USER, "I got a job at Douro Labs."),
            (_BOT, "Congratulations! What will you build at Douro Labs?"),
            (_USER, "Sensor fusion for river drones, with my new lead Rui Almeida."),
            (_USER, "My favourite colour is green now, like the Douro valley."),
            (_USER, "Tomas Ribeiro visited me in Porto and we walked along the Douro river."),
        ],
    ),
    (
        "porto-2",
        datetime(2024, 3, 21, 21, 0),
        [
            (_USER, "I went to the climbing gym with Tomas Ribeiro yesterday, and it was great!"),
            (_USER, "Rui Almeida wants a demo of the river drones for the Douro Labs board."),
            (_BOT, "When is the board demo at Douro Labs?"),
            (_USER, "In May, in Porto, right before the robotics fair in Berlin."),
        ],
    ),
    (
        "berlin-1",
        datetime(2024, 5, 27, 9, 0),
        [
            (_USER, "I am in Berlin for the robotics fair with Rui Almeida."),
            (_USER, "At the fair I met Ines Costa again; Atlas Robotics had a big stand."),
            (_BOT, "Did the river drones demo go well in Berlin?"),
            (_USER, "Yes, the Douro Labs drones won a prize at the Berlin fair."),
            (_USER, "My favourite colour is orange these days, like the fair posters."),
        ],
    ),
]


class Client(Protocol):
    """The part of ``httpx.Client`` (and FastAPI's TestClient) the demo needs."""

    def post(self, url: str, *, json: Any = None) -> Any: ...

    def delete(self, url: str) -> Any: ...


def sessions() -> list[dict[str, Any]]:
    """The demo's sessions as ``POST /v1/spaces/{space}/sessions`` bodies."""
    out = []
    for session_id, start, turns in _SESSIONS:
        out.append(
            {
                "session_id": session_id,
                "started_at": start.isoformat() + "Z",
                "turns": [
                    {
                        "role": "user" if speaker == _USER else "assistant",
                        "speaker": speaker,
                        "content": text,
                        "time": (start + timedelta(minutes=i)).isoformat() + "Z",
                    }
                    for i, (speaker, text) in enumerate(turns)
                ],
            }
        )
    return out


def _ok(response: Any, what: str) -> Any:
    if response.status_code >= 300:
        raise RuntimeError(f"{what}: HTTP {response.status_code} {response.text[:500]}")
    return response.json()


def ingest_demo(
    client: Client, space: str = DEMO_SPACE, jobs: Sequence[str] = DEMO_JOBS
) -> dict[str, Any]:
    """Create ``space`` (replacing an earlier one), ingest the sessions, run ``jobs``.

    Returns what the API answered: ingest counts and each job's counts.
    """
    client.delete(f"/v1/spaces/{space}")
    _ok(client.post("/v1/spaces", json={"id": space, "name": "Browser demo"}), "create space")
    report: dict[str, Any] = {"space": space, "sessions": [], "jobs": {}}
    for body in sessions():
        got = _ok(client.post(f"/v1/spaces/{space}/sessions", json=body), body["session_id"])
        report["sessions"].append({"session": body["session_id"], "counts": got["counts"]})
    for job in jobs:
        run = _ok(client.post(f"/v1/spaces/{space}/jobs/{job}", json={"dry_run": False}), job)
        report["jobs"][job] = run.get("counts")
    return report

"""Exact identifier lookups through the HTTP API (issue 55 item 3): ``n`` memories stored
one request each, each with a reference code ("… (ref: SCALEMARK000007)"), then one
``POST /recall {"query": "<code>", "k": 10}`` per memory; prints how often its memory is
first and how often recall abstains. Needs a running Neo4j (``--neo4j``); the space is
deleted afterwards.

    .venv/bin/python -m benchmarks.identifier_lookup --neo4j bolt://127.0.0.1:7799 --n 300
"""

from __future__ import annotations

import argparse
import json
import uuid
from typing import Any

from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from pipelines.engine import Engine, EngineSettings, load_models
from pipelines.graph import GraphConfig

TOPICS = ("billing", "search", "auth", "payments", "ingest", "export", "mailer", "scheduler",
          "cache", "gateway")  # fmt: skip
EVENTS = ("was restarted after a config change", "had a latency spike during the night",
          "lost a replica and recovered", "got a new rate limit",
          "was rolled back to the previous release", "ran out of disk space")  # fmt: skip


def code(i: int) -> str:
    return f"SCALEMARK{i:06d}"


def memory_text(i: int) -> str:
    """Look-alike incident notes: only the reference code tells them apart."""
    return f"Incident {i}: the {TOPICS[i % len(TOPICS)]} service {EVENTS[i % len(EVENTS)]} " \
        f"(ref: {code(i)})"  # fmt: skip


def store(client: TestClient, space: str, n: int) -> list[str]:
    """The memories' ids, stored one request each."""
    ids = []
    for i in range(n):
        r = client.post(
            f"/v1/spaces/{space}/memories", json={"memories": [{"content": memory_text(i)}]}
        )
        assert r.status_code == 201, r.text
        ids.append(r.json()["items"][0]["id"])
    return ids


def lookups(client: TestClient, space: str, ids: list[str]) -> dict[str, Any]:
    """One recall per code: how many put its memory first, how many abstained."""
    first = abstained = 0
    misses: list[dict[str, Any]] = []
    for i, memory_id in enumerate(ids):
        r = client.post(f"/v1/spaces/{space}/recall", json={"query": code(i), "k": 10})
        assert r.status_code == 200, r.text
        body = r.json()
        top = body["results"][0]["id"] if body["results"] else None
        first += top == memory_id
        abstained += bool(body["abstain"])
        if top != memory_id and len(misses) < 5:
            misses.append({"query": code(i), "top": body["results"][0]["content"] if top else None})
    return {"memories": len(ids), "first": first, "abstained": abstained, "misses": misses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--neo4j", required=True, help="bolt URI of a running Neo4j + GDS")
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args()
    settings = EngineSettings(graph=GraphConfig(uri=args.neo4j))
    engine = Engine.start(settings, models=load_models(settings))
    try:
        with TestClient(create_app(Settings(neo4j_uri=args.neo4j), engine=engine)) as client:
            space = f"idlookup-{uuid.uuid4().hex[:8]}"
            assert client.post("/v1/spaces", json={"id": space}).status_code == 201
            try:
                print(json.dumps(lookups(client, space, store(client, space, args.n)), indent=1))
            finally:
                client.delete(f"/v1/spaces/{space}")
    finally:
        engine.close()


if __name__ == "__main__":
    main()

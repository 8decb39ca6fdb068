"""Export/import equivalence on LoCoMo, across servers: a conversation ingested into a space of
a fresh *source* server (holding nothing else), exported (``mnemograph export``'s records) and
imported into a fresh *target* server, must give identical ``/recall`` results (ids, order,
scores) for every question of the conversation, and the target's own export must hold the
same records as the source's.

    python -m benchmarks.transfer_equivalence --conversations 0 1 --out FILE

Each conversation gets two new Neo4j instances (data under ``--work``, Bolt on ``--neo4j-port``
and the next port), each with its own API (uvicorn in-process on ``--api-port`` and the next),
both stopped and deleted afterwards: full-text scores use statistics of the whole Lucene index
(other spaces' documents, and deleted ones until Lucene merges them away), so only servers
holding the same documents can be compared score for score. The harness talks to the servers
only through the SDK and reads from the dataset what the system may see (sessions, turns;
question text and time). Recalls run with ``touch=false`` so neither space's heat changes while
they are compared.
"""

from __future__ import annotations

import argparse
import json
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import uvicorn
from tqdm import tqdm

from app.main import create_app
from app.settings import Settings
from benchmarks import locomo, machine
from benchmarks.format import Conversation
from benchmarks.sut import corpus_sessions, query_input
from mnemograph.client import Client
from mnemograph.client.transfer import counts_record, mismatches
from neo4j_runtime import runtime
from neo4j_runtime.settings import InstanceConfig

Hits = list[tuple[str, float]]


@contextmanager
def _serve(neo4j: InstanceConfig, port: int) -> Iterator[None]:
    user, password = neo4j.auth or (None, None)
    settings = Settings(neo4j_uri=neo4j.bolt_uri, neo4j_user=user, neo4j_password=password)
    server = uvicorn.Server(uvicorn.Config(create_app(settings), port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.2)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=60)


@contextmanager
def _fresh_neo4j(names: list[str], work: Path, first_port: int) -> Iterator[list[InstanceConfig]]:
    """New Neo4j instances (empty data directories under ``work``), started one after the
    other (started side by side, a fresh instance once left its first query unanswered);
    stopped and their directories removed at the end."""
    for name in names:  # emptied before the configs generate their passwords there
        shutil.rmtree(work / name, ignore_errors=True)
    instances = [
        InstanceConfig(name=f"transfer-{name}", base_dir=work / name, bolt_port=first_port + i,
                       heap_initial="1g", heap_max="1g", pagecache="512m")
        for i, name in enumerate(names)
    ]  # fmt: skip
    try:
        for inst in instances:
            runtime.start(inst, timeout=300, quiet=True)
        yield instances
    finally:
        for inst in instances:
            runtime.stop(inst)
            shutil.rmtree(inst.base_dir, ignore_errors=True)


def _iso(t: datetime | None) -> str | None:
    return t.isoformat() if t is not None else None


def _ingest(mg: Client, space: str, conv: Conversation) -> None:
    mg.create_space(space)
    for s in tqdm(corpus_sessions(conv.sessions), desc=f"ingest {conv.id}", unit="session"):
        turns = [
            {"id": t.id, "role": t.role, "speaker": t.speaker, "content": t.content,
             "time": _iso(t.time)}
            for t in s.turns
        ]  # fmt: skip
        body = {"session_id": s.id, "started_at": _iso(s.started_at), "turns": turns}
        mg.add_session(space, {k: v for k, v in body.items() if v is not None})


def _recall(mg: Client, space: str, text: str, now: datetime | None) -> Hits:
    extra = {"now": _iso(now)} if now else {}
    out = mg.recall(space, text, k=10, touch=False, **extra)
    return [(h.id, h.score) for h in out.results]


def _content(records: list[dict[str, Any]]) -> list[str]:
    """An export's records without its header (which says when it was made), canonical."""
    return sorted(json.dumps(r, sort_keys=True) for r in records if r.get("type") != "header")


def _export(mg: Client, space: str, embeddings: bool, path: Path) -> list[dict[str, Any]]:
    with path.open("w", encoding="utf-8") as f:
        for record in mg.export(space, embeddings=embeddings):
            f.write(json.dumps(record) + "\n")
    return [json.loads(line) for line in path.open(encoding="utf-8")]


def _questions(src: Client, dst: Client, space: str, conv: Conversation) -> dict[str, Any]:
    same = exact = 0
    differing: list[str] = []
    for q in tqdm(conv.questions, desc=f"recall {conv.id}", unit="q"):
        query = query_input(q)
        a = _recall(src, space, query.text, query.question_time)
        b = _recall(dst, space, query.text, query.question_time)
        same += [i for i, _ in a] == [i for i, _ in b]
        exact += a == b
        if a != b:
            differing.append(q.id)
    return {"identical_ids": same, "identical_ids_and_scores": exact,
            "differing_questions": differing}  # fmt: skip


def compare(src: Client, dst: Client, conv: Conversation, embeddings: bool, work: Path) -> dict:
    """Ingest ``conv`` on the source, move it to the target, compare the two."""
    space = f"locomo-{conv.id}"
    t0 = time.perf_counter()
    _ingest(src, space, conv)
    ingest_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    records = _export(src, space, embeddings, work / f"{conv.id}.jsonl")
    export_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    dst.import_records(space, records)
    import_s = time.perf_counter() - t0
    expected = counts_record(records)
    assert expected is not None
    problems = mismatches(expected, dst.transfer_counts(space))
    # the target's export holds the source's records (with embeddings: every property)
    again = _export(dst, space, embeddings, work / f"{conv.id}.target.jsonl")
    a, b = _content(records), _content(again)
    return {
        "conversation": conv.id,
        "questions": len(conv.questions),
        **_questions(src, dst, space, conv),
        "counts": expected.model_dump(),
        "count_mismatches": problems,
        "reexport_identical": a == b,
        "reexport_differing_records": len(set(a) ^ set(b)),
        "export_bytes": (work / f"{conv.id}.jsonl").stat().st_size,
        "seconds": {"ingest": round(ingest_s, 1), "export": round(export_s, 1),
                    "import": round(import_s, 1)},
    }  # fmt: skip


def run_one(conv: Conversation, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    # the clients exist before the servers start (their transports import lazily, and an
    # import racing the servers' start-up in their threads was seen to deadlock)
    ports = (args.api_port, args.api_port + 1)
    with (
        Client(f"http://127.0.0.1:{ports[0]}", timeout=300) as src,
        Client(f"http://127.0.0.1:{ports[1]}", timeout=300) as dst,
        _fresh_neo4j(["source", "target"], work, args.neo4j_port) as (src_neo, dst_neo),
        _serve(src_neo, ports[0]),
        _serve(dst_neo, ports[1]),
    ):
        return compare(src, dst, conv, not args.no_embeddings, work)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--neo4j-port", type=int, default=7742, help="source Bolt port (+1: target)")
    p.add_argument("--api-port", type=int, default=8742, help="source API port (+1: target)")
    p.add_argument("--conversations", type=int, nargs="*", help="indexes (default: all)")
    p.add_argument("--no-embeddings", action="store_true", help="export without vectors")
    p.add_argument("--work", default="/tmp/mnemograph-transfer", help="exports and databases")
    p.add_argument("--out", help="result JSON file")
    args = p.parse_args(argv)
    dataset, _ = locomo.load()
    picked = [
        dataset.conversations[i] for i in (args.conversations or range(len(dataset.conversations)))
    ]
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    load_start = machine.load_average()
    results = []
    for conv in picked:
        results.append(run_one(conv, args, work))
        print(json.dumps(results[-1]), flush=True)
    summary = {
        "benchmark": "transfer-equivalence",
        "servers": "fresh source and target Neo4j per conversation",
        "embeddings": not args.no_embeddings,
        "at": datetime.now(UTC).isoformat(),
        "load_average": {"start": load_start, "end": machine.load_average()},
        "questions": sum(r["questions"] for r in results),
        "identical_ids": sum(r["identical_ids"] for r in results),
        "identical_ids_and_scores": sum(r["identical_ids_and_scores"] for r in results),
        "reexport_identical": all(r["reexport_identical"] for r in results),
        "count_mismatches": sum(len(r["count_mismatches"]) for r in results),
        "conversations": results,
    }
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "conversations"}))
    return 0 if summary["identical_ids_and_scores"] == summary["questions"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Export/import equivalence on LoCoMo: a conversation ingested into a space through the API,
exported (``mnemograph export``'s records) and imported into a fresh space, must give
identical ``/recall`` results (ids, order, scores) for every question of the conversation.

    python -m benchmarks.transfer_equivalence --conversations 0 1 --out FILE

It starts the API in-process (uvicorn on ``--port``) on the Neo4j at ``--neo4j``, talks to it
only through the SDK, and reads from the dataset what the system may see (sessions, turns;
question text and time). Recalls run with ``touch=false`` so neither space's heat changes
while they are compared.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import uvicorn
from tqdm import tqdm

from app.main import create_app
from app.settings import Settings
from benchmarks import locomo
from benchmarks.format import Conversation
from benchmarks.sut import corpus_sessions, query_input
from mnemograph.client import Client
from mnemograph.client.transfer import counts_record, mismatches


def _serve(neo4j: str, port: int) -> Iterator[str]:
    server = uvicorn.Server(
        uvicorn.Config(create_app(Settings(neo4j_uri=neo4j)), port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.2)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)


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


def _recall(mg: Client, space: str, text: str, now: datetime | None) -> list[tuple[str, float]]:
    extra = {"now": _iso(now)} if now else {}
    out = mg.recall(space, text, k=10, touch=False, **extra)
    return [(h.id, h.score) for h in out.results]


def compare(mg: Client, conv: Conversation, embeddings: bool, dump: Path) -> dict[str, Any]:
    src, dst = f"eq-src-{conv.id}", f"eq-dst-{conv.id}"
    for space in (src, dst):
        if any(s.id == space for s in mg.iter_spaces()):
            mg.delete_space(space)
    t0 = time.perf_counter()
    _ingest(mg, src, conv)
    ingest_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    with dump.open("w", encoding="utf-8") as f:
        for record in mg.export(src, embeddings=embeddings):
            f.write(json.dumps(record) + "\n")
    records = [json.loads(line) for line in dump.open(encoding="utf-8")]
    export_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    mg.import_records(dst, records)
    import_s = time.perf_counter() - t0
    expected = counts_record(records)
    assert expected is not None
    problems = mismatches(expected, mg.transfer_counts(dst))
    same = exact = 0
    differing: list[str] = []
    for q in tqdm(conv.questions, desc=f"recall {conv.id}", unit="q"):
        query = query_input(q)
        a = _recall(mg, src, query.text, query.question_time)
        b = _recall(mg, dst, query.text, query.question_time)
        same += [i for i, _ in a] == [i for i, _ in b]
        exact += a == b
        if a != b:
            differing.append(q.id)
    for space in (src, dst):
        mg.delete_space(space)
    return {
        "conversation": conv.id,
        "questions": len(conv.questions),
        "identical_ids": same,
        "identical_ids_and_scores": exact,
        "differing_questions": differing,
        "counts": expected.model_dump(),
        "count_mismatches": problems,
        "export_bytes": dump.stat().st_size,
        "seconds": {"ingest": round(ingest_s, 1), "export": round(export_s, 1),
                    "import": round(import_s, 1)},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--neo4j", default="bolt://127.0.0.1:7687")
    p.add_argument("--port", type=int, default=8740)
    p.add_argument("--conversations", type=int, nargs="*", help="indexes (default: all)")
    p.add_argument("--no-embeddings", action="store_true", help="export without vectors")
    p.add_argument("--work", default="/tmp/mnemograph-transfer", help="where exports go")
    p.add_argument("--out", help="result JSON file")
    args = p.parse_args(argv)
    dataset, _ = locomo.load()
    picked = [
        dataset.conversations[i] for i in (args.conversations or range(len(dataset.conversations)))
    ]
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    results = []
    for url in _serve(args.neo4j, args.port):
        with Client(url, timeout=300) as mg:
            for conv in picked:
                results.append(compare(mg, conv, not args.no_embeddings, work / f"{conv.id}.jsonl"))
                print(json.dumps(results[-1]), flush=True)
    summary = {
        "benchmark": "transfer-equivalence",
        "embeddings": not args.no_embeddings,
        "at": datetime.now(UTC).isoformat(),
        "questions": sum(r["questions"] for r in results),
        "identical_ids_and_scores": sum(r["identical_ids_and_scores"] for r in results),
        "conversations": results,
    }
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "conversations"}))
    return 0 if summary["questions"] == summary["identical_ids_and_scores"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Knowledge-update benchmark (``python -m benchmarks knowledge-update``).

Synthetic update sequences: for each of ten attributes of one person, a value is stated, then
changed twice (three memories, 60 days apart), among unrelated filler memories. The same corpus
is ingested into two fresh spaces; one of them gets the ``supersede`` consolidation job. Each
attribute's question then goes through recall (default preset, ``touch=false``), and the report
counts, with and without the job: questions whose first result is the latest value, and
questions whose results still contain an outdated value.

The sequences are hand-written here (not LoCoMo text: LoCoMo never restates an attribute with a
changed value, so the job proposes nothing there). The system sees only the memories and the
question; which memory is the latest is read by the scorer alone.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks import machine

#: (question, [first value, second value, latest value]) — all said by the same person.
SEQUENCES: tuple[tuple[str, tuple[str, str, str]], ...] = (
    (
        "What is Ann's favourite colour?",
        (
            "My favourite colour is blue.",
            "My favourite colour is red now.",
            "My favourite colour is green these days.",
        ),
    ),
    (
        "Where does Ann live?",
        ("I live in Paris.", "I moved to Berlin last month.", "I just moved to Tokyo!"),
    ),
    (
        "Where does Ann work?",
        ("I work at Google.", "I started working at Microsoft.", "I got a new job at Sony."),
    ),
    ("How old is Ann?", ("I am 30 years old.", "I just turned 31.", "I turned 32 yesterday.")),
    (
        "What is Ann's relationship status?",
        ("I am single.", "We got engaged!", "I got married last weekend."),
    ),
    ("Who is Ann's boss?", ("My boss is Sarah.", "My boss is Tom now.", "My new boss is Priya.")),
    (
        "What is Ann's favourite food?",
        (
            "My favourite food is pizza.",
            "My favourite food is sushi now.",
            "My favourite food is ramen these days.",
        ),
    ),
    (
        "What is Ann's phone number?",
        (
            "My phone number is 555-1234.",
            "My phone number changed to 555-9876.",
            "My phone number is 555-4444 now.",
        ),
    ),
    (
        "What does Ann do for a living?",
        ("I work as a nurse.", "I work as a teacher now.", "I work as a designer these days."),
    ),
    (
        "Does Ann like sushi?",
        ("I love sushi.", "I don't like sushi anymore.", "I like sushi again."),
    ),
)
FILLER = (
    "I went hiking with my dog on Saturday.",
    "The weather was awful all week.",
    "I read a great book about birds.",
    "We watched a movie with friends.",
    "Work was busy today.",
)
START = datetime(2024, 1, 1, tzinfo=UTC)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", default="knowledge-update")
    p.add_argument("--out-dir", type=Path, default=None)
    p.add_argument("--neo4j-uri", default=None)
    p.add_argument("--keep-neo4j", action="store_true")
    p.add_argument("--keep-spaces", action="store_true")


def memory_id(seq: int, version: int) -> str:
    return f"a{seq}v{version}"


def build_space(engine: Any, space: str) -> None:
    from pipelines import spaces
    from pipelines.ingest.service import Ingestor, MemoryIn

    spaces.create(
        engine.store,
        spaces.NewSpace(id=space, description="knowledge-update benchmark (temporary)"),
    )
    items = [
        MemoryIn(
            text,
            id=memory_id(k, i),
            speaker="Ann",
            role="user",
            time=START + timedelta(days=60 * i + k),
        )
        for k, (_, values) in enumerate(SEQUENCES)
        for i, text in enumerate(values)
    ]
    items += [
        MemoryIn(text, id=f"f{j}", speaker="Ann", role="user", time=START + timedelta(days=5 * j))
        for j, text in enumerate(FILLER)
    ]
    Ingestor(engine).add_memories(space, items)


def score(results: dict[str, list[str]]) -> dict[str, Any]:
    """``results[question] -> ranked ids`` into the two counts (pure)."""
    latest_first = 0
    stale = 0
    for k, (question, values) in enumerate(SEQUENCES):
        ids = results.get(question, [])
        latest = memory_id(k, len(values) - 1)
        latest_first += ids[:1] == [latest]
        stale += any(i.startswith(f"a{k}v") and i != latest for i in ids)
    n = len(SEQUENCES)
    return {
        "questions": n,
        "latest_first": latest_first,
        "with_outdated_value": stale,
        "latest_first_share": round(latest_first / n, 3),
    }


def run_variant(engine: Any, space: str, with_job: bool) -> dict[str, Any]:
    from pipelines.consolidate.runner import run_job
    from pipelines.recall.service import Recaller, RecallRequest

    build_space(engine, space)
    job_counts = run_job(engine, space, "supersede").counts if with_job else None
    recaller = Recaller(engine)
    ranked = {
        q: [r.id for r in recaller.recall(space, RecallRequest(query=q, touch=False)).results]
        for q, _ in SEQUENCES
    }
    return {"job": job_counts, **score(ranked), "results": ranked}


def main(args: argparse.Namespace) -> int:
    from benchmarks import reports
    from benchmarks.instance import neo4j_for_bench, preexisting_memories, start_engine
    from pipelines import spaces

    started, load_start, code = machine.now_iso(), machine.load_average(), machine.code_version()
    t0 = time.perf_counter()
    out: dict[str, Any] = {}
    with neo4j_for_bench(args.neo4j_uri, keep=args.keep_neo4j) as neo:
        engine = start_engine(neo.uri, neo.auth)
        preexisting_memories(engine, neo)  # warns; this benchmark measures quality only
        made = []
        try:
            for label, with_job in (("without", False), ("with", True)):
                space = f"ku-{label}-{uuid.uuid4().hex[:6]}"
                made.append(space)
                out[label] = run_variant(engine, space, with_job)
                print(
                    f"{label} the supersede job: latest first {out[label]['latest_first']}/"
                    f"{out[label]['questions']}, outdated value in the results "
                    f"{out[label]['with_outdated_value']}",
                    flush=True,
                )
        finally:
            if not args.keep_spaces:
                for space in made:
                    spaces.delete(engine.store, space)
            engine.close()
    result = {
        "name": args.name,
        "kind": "knowledge-update",
        "command": "python -m benchmarks " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "code": code,
        "machine": machine.record(load_start),
        "started_at": started,
        "ended_at": machine.now_iso(),
        "durations_s": {"total": round(time.perf_counter() - t0, 1)},
        "variants": out,
    }
    out_dir = args.out_dir or reports.RESULTS_DIR
    lines = [f"# Benchmark `{args.name}` (knowledge update)", "", *reports._run_header(result), ""]
    lines += reports._table(
        ["supersede job", "latest value first", "questions with an outdated value", "job counts"],
        [
            [
                label,
                f"{v['latest_first']} / {v['questions']}",
                f"{v['with_outdated_value']} / {v['questions']}",
                ", ".join(f"{k} {c}" for k, c in sorted((v["job"] or {}).items())) or "–",
            ]
            for label, v in out.items()
        ],
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / f"{args.name}.md"
    md.write_text("\n".join(lines) + "\n")
    print(f"wrote {reports.write_json(result, out_dir)}, {md}")
    return 0

"""Consolidation benchmark (``make bench-consolidation`` = ``python -m benchmarks consolidation``).

One full consolidation pass (:func:`pipelines.consolidate.runner.run_full_pass`: decay, merge,
supersede, communities, schemas, upkeep, retention, in pipeline order) over one space, timed
per job: wall time, the CPU seconds of this process (Python: embeddings, pure algorithms) and of
the Neo4j JVM (Cypher, GDS), and what each job changed.

The space is either an existing one (``--space``, for example the 100K synthetic space that
``python -m benchmarks perf --keep-spaces`` leaves behind; its name is in the perf result's
``latency_info.space``) or a fresh synthetic one of ``--size`` memories (:mod:`benchmarks.synth`,
ingested through the service layer, gate off). Retention follows the space's policy (a dry run
unless the policy says ``apply``). The target of issue 6 is a full pass over 100,000 memories
within 2 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks import machine
from benchmarks.machine import process_cpu_seconds

TARGET_SECONDS = 120.0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--space", default=None, help="an existing space to consolidate")
    p.add_argument("--size", type=int, default=100_000, help="synthetic memories (no --space)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--batch-turns", type=int, default=2000)
    p.add_argument("--dry-run", action="store_true", help="every job as a dry run")
    p.add_argument("--name", default="consolidation")
    p.add_argument("--out-dir", type=Path, default=None)
    p.add_argument("--neo4j-uri", default=None)
    p.add_argument("--keep-neo4j", action="store_true")
    p.add_argument("--keep-spaces", action="store_true", help="keep a space this run built")
    p.add_argument("--no-progress", action="store_true")


def timed_pass(engine: Any, space: str, neo_pid: int | None, dry_run: bool) -> dict[str, Any]:
    """Every job once, in pipeline order, with wall and CPU seconds per job."""
    from pipelines.consolidate.config import JOB_NAMES
    from pipelines.consolidate.runner import run_full_pass

    jobs: dict[str, Any] = {}
    for job in JOB_NAMES:
        neo0, py0, t0 = process_cpu_seconds(neo_pid), time.process_time(), time.perf_counter()
        report = run_full_pass(engine, space, dry_run=dry_run, jobs=(job,))
        wall = time.perf_counter() - t0
        neo1 = process_cpu_seconds(neo_pid)
        row = report.jobs[job]
        jobs[job] = {
            "wall_s": round(wall, 2),
            "python_cpu_s": round(time.process_time() - py0, 2),
            "neo4j_cpu_s": round(neo1 - neo0, 2) if neo0 is not None and neo1 is not None else None,
            "status": row.status,
            "dry_run": row.dry_run,
            "counts": row.counts,
            "errors": row.errors,
        }
        print(f"  {job}: {wall:.1f}s {row.status} {json.dumps(row.counts)}", flush=True)
    total = round(sum(j["wall_s"] for j in jobs.values()), 2)
    return {
        "jobs": jobs,
        "total_wall_s": total,
        "total_python_cpu_s": round(sum(j["python_cpu_s"] for j in jobs.values()), 2),
        "total_neo4j_cpu_s": (
            round(sum(j["neo4j_cpu_s"] for j in jobs.values()), 2)
            if all(j["neo4j_cpu_s"] is not None for j in jobs.values())
            else None
        ),
        "target_s": TARGET_SECONDS,
        "within_target": total <= TARGET_SECONDS,
    }


def consolidation_markdown(result: dict[str, Any]) -> str:
    from benchmarks.reports import _run_header, _table

    p = result["pass"]
    lines = [f"# Benchmark `{result['name']}` (consolidation)", "", *_run_header(result), ""]
    lines += [
        f"Space: `{result['space']}` ({result['pool'].get('memories')} memories, "
        f"{result['pool'].get('entities')} entities, {result['pool'].get('stages')} stages)"
        + (f", built by this run in {result['build_s']} s" if result.get("build_s") else "")
        + ".",
        "",
        f"Full pass: **{p['total_wall_s']} s** wall (target {p['target_s']:.0f} s: "
        f"{'met' if p['within_target'] else 'NOT met'}); CPU: Python {p['total_python_cpu_s']} s, "
        f"Neo4j {p['total_neo4j_cpu_s']} s.",
        "",
    ]
    lines += _table(
        ["job", "wall s", "Python CPU s", "Neo4j CPU s", "status", "dry run", "counts"],
        [
            [
                job,
                f"{j['wall_s']:.1f}",
                f"{j['python_cpu_s']:.1f}",
                "–" if j["neo4j_cpu_s"] is None else f"{j['neo4j_cpu_s']:.1f}",
                j["status"],
                str(j["dry_run"]).lower(),
                ", ".join(f"{k} {v}" for k, v in sorted(j["counts"].items())) or "–",
            ]
            for job, j in p["jobs"].items()
        ],
    )
    lines.append("")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    from benchmarks import reports, synth
    from benchmarks.instance import neo4j_for_bench, preexisting_memories, start_engine
    from benchmarks.mnemograph import MnemographSystem

    started = machine.now_iso()
    load_start = machine.load_average()
    code = machine.code_version()
    t0 = time.perf_counter()
    build_s = None
    with neo4j_for_bench(args.neo4j_uri, keep=args.keep_neo4j) as neo:
        engine = start_engine(neo.uri, neo.auth)
        preexisting_memories(engine, neo)
        system = MnemographSystem(
            engine, batch_turns=args.batch_turns, progress=not args.no_progress
        )
        built = args.space is None
        space = args.space or f"consolidation-{uuid.uuid4().hex[:8]}-synth"
        try:
            if built:
                print(f"building {space}: {args.size} synthetic memories …", flush=True)
                sessions = synth.take(args.size, synth.SynthConfig(seed=args.seed), skip=0)
                build_s = round(system.prepare(space, sessions, schemas=False).seconds, 1)
            pool = system.pool_size(space)
            print(f"full consolidation pass over {space} ({pool['memories']} memories) …")
            result_pass = timed_pass(engine, space, neo.pid, args.dry_run)
        finally:
            if built and not args.keep_spaces:
                system.drop(space)
            engine.close()
        neo_desc = neo.describe()
    result = {
        "name": args.name,
        "kind": "consolidation",
        "command": "python -m benchmarks " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "config": {
            "size": args.size,
            "seed": args.seed,
            "dry_run": args.dry_run,
            "neo4j": neo_desc,
        },
        "code": code,
        "machine": machine.record(load_start),
        "started_at": started,
        "ended_at": machine.now_iso(),
        "durations_s": {"total": round(time.perf_counter() - t0, 1)},
        "space": space,
        "pool": pool,
        "build_s": build_s,
        "pass": result_pass,
    }
    out_dir = args.out_dir or reports.RESULTS_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / f"{args.name}.md"
    md.write_text(consolidation_markdown(result))
    js = reports.write_json(result, out_dir)
    print(f"full pass {result_pass['total_wall_s']} s; wrote {js}, {md}")
    return 0

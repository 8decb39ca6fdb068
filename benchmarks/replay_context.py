"""Replay the context benchmark's questions on spaces a run kept (``--keep-spaces``), and
compare two replays: the equivalence check of a refactor of context assembly.

``replay`` asks the assembler (:class:`benchmarks.context_bench.AssemblerContext`, the
harness's own adapter and input) every question of a result file's units at each budget, on
the same space, and writes per question the memory ids, the used tokens, the latency, the
mode, a hash of the prompt and of the report (its timings left out), and the whole prompt of
the first ``--prompts`` questions. Run it once with each code version (``PYTHONPATH``) and
``compare`` the two files: every id list, token count and prompt hash must be equal; the
latencies are shown side by side. Reads only: the spaces are never written, so a replay
refuses spaces whose stage schemas this code version finds missing or stale (it would queue
rebuilds, and the schema algorithm's version is part of the fingerprint): run the ``schemas``
job with that version first.

    python -m benchmarks.replay_context replay --result R.json --dataset locomo \\
        --neo4j-uri bolt://127.0.0.1:7799 --out new.json
    python -m benchmarks.replay_context compare old.json new.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

SKIP_REPORT = ("timings_ms",)


def _dataset(name: str, path: str | None) -> Any:
    if name == "locomo":
        from benchmarks import locomo

        raw = json.loads(locomo.resolve_path(path).read_text(encoding="utf-8"))
        return locomo.convert(raw)[0]
    from benchmarks import beam

    return beam.load(path)[0]


def _units(result: dict[str, Any], setting: str) -> list[tuple[str, list[str]]]:
    """(space, conversation ids) of each unit the run kept."""
    ingest = result["results"][setting]["ingest"]
    return [(u["space"], list(u["conversations"])) for u in ingest]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _ask(ctx: Any, space: str, q: Any, budget: int) -> tuple[Any, float]:
    """The raw response to one question, as the adapter asks it (either code version)."""
    kwargs: dict[str, Any] = {"query": q.text, "context_window": budget, "headroom": 1.0}
    if q.question_time is not None:
        kwargs["now"] = q.question_time
    variant = getattr(ctx, "_preset", None) or getattr(ctx, "_experiment", None)
    t0 = time.perf_counter()
    resp = ctx._assembler.assemble(space, ctx._request_cls(**kwargs), variant)
    return resp, (time.perf_counter() - t0) * 1000.0


def unbuilt_schemas(engine: Any, spaces: list[str]) -> dict[str, int]:
    """Space -> stages whose schema this code version finds missing or stale (reads only)."""
    from pipelines.consolidate import schemas

    out: dict[str, int] = {}
    for space in spaces:
        rows = engine.store.read("consolidate/schema_fingerprints", space=space, stages=None)
        _, to_build = schemas.stored_schemas(engine, space, [r["id"] for r in rows])
        if to_build:
            out[space] = len(to_build)
    return out


def replay(args: argparse.Namespace) -> int:
    from benchmarks.context_bench import AssemblerContext, included_memory_ids
    from benchmarks.instance import start_engine

    result = json.loads(Path(args.result).read_text(encoding="utf-8"))
    dataset = _dataset(args.dataset, args.path)
    convs = {c.id: c for c in dataset.conversations}
    engine = start_engine(args.neo4j_uri)
    units = _units(result, args.setting)[: args.limit_conversations]
    unbuilt = unbuilt_schemas(engine, [space for space, _ in units])
    if unbuilt:
        engine.close()
        print(
            f"stage schemas missing or stale for this code version: {unbuilt}; run the "
            "schemas job with it first (a replay would queue rebuilds: writes)"
        )
        return 2
    ctx = AssemblerContext(engine, args.variant)
    if args.set:  # the same configuration overrides in either code version
        from pipelines.assemble.config import AssemblyConfig

        fields = {k: json.loads(v) for k, v in (pair.split("=", 1) for pair in args.set)}
        ctx._assembler = type(ctx._assembler)(
            engine,
            read_ahead=ctx._pool,
            config=AssemblyConfig(safety_margin=0, **fields),
            recall_executor=ctx._recall_pool,
        )
    rows: list[dict[str, Any]] = []
    prompts: dict[str, str] = {}
    try:
        warm = convs[units[0][1][0]].questions[0]
        _ask(ctx, units[0][0], warm, args.budgets[0])  # models loaded, caches warm
        for space, ids in units:
            for cid in ids:
                for q in convs[cid].questions[: args.limit_questions]:
                    for budget in args.budgets:
                        resp, ms = _ask(ctx, space, q, budget)
                        report = resp.report.as_dict()
                        for key in SKIP_REPORT:
                            report.pop(key, None)
                        key = f"{cid}/{q.id}/{budget}"
                        rows.append(
                            {
                                "key": key,
                                "ids": included_memory_ids(resp),
                                "used_tokens": int(resp.report.total_tokens),
                                "latency_ms": round(ms, 2),
                                "mode": resp.report.mode,
                                "prompt": _sha(resp.prompt),
                                "report": _sha(json.dumps(report, sort_keys=True)),
                            }
                        )
                        if len(prompts) < args.prompts:
                            prompts[key] = resp.prompt
            print(f"{space}: {len(rows)} contexts so far", flush=True)
    finally:
        ctx.close()
        engine.close()
    out = {"variant": args.variant, "rows": rows, "prompts": prompts}
    Path(args.out).write_text(json.dumps(out) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(rows)} contexts")
    return 0


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def compare(args: argparse.Namespace) -> int:
    old, new = (json.loads(Path(p).read_text(encoding="utf-8")) for p in (args.old, args.new))
    a = {r["key"]: r for r in old["rows"]}
    b = {r["key"]: r for r in new["rows"]}
    if set(a) != set(b):
        print(f"different questions: {len(set(a) ^ set(b))} keys in one file only")
    common = sorted(set(a) & set(b))
    diffs = {field: 0 for field in ("ids", "used_tokens", "mode", "prompt", "report")}
    for key in common:
        for field in diffs:
            if a[key][field] != b[key][field]:
                diffs[field] += 1
                if diffs[field] <= 3:
                    print(f"{field} differs at {key}: {a[key][field]!r} vs {b[key][field]!r}")
    same_prompts = sum(1 for k, v in old["prompts"].items() if new["prompts"].get(k) == v)
    print(f"{len(common)} contexts compared; differences: {diffs}")
    print(f"full prompts byte-identical: {same_prompts} of {len(old['prompts'])}")
    for name, rows in (("old", a), ("new", b)):
        ms = [rows[k]["latency_ms"] for k in common]
        print(
            f"latency {name}: p50 {_p(ms, 0.5):.1f} ms, p95 {_p(ms, 0.95):.1f} ms, "
            f"mean {statistics.fmean(ms) if ms else 0:.1f} ms"
        )
    return 0 if not any(diffs.values()) and set(a) == set(b) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.replay_context")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("replay", help="ask every question of a kept run again")
    r.add_argument("--result", required=True, help="the run's result JSON")
    r.add_argument("--dataset", choices=["locomo", "beam"], required=True)
    r.add_argument("--path", default=None, help="the dataset (default: the benchmark's)")
    r.add_argument("--setting", default="per-conversation")
    r.add_argument("--variant", default="assembler")
    r.add_argument("--budgets", nargs="+", type=int, default=[1000, 2000, 4000])
    r.add_argument("--neo4j-uri", required=True)
    r.add_argument(
        "--set",
        nargs="*",
        default=[],
        metavar="FIELD=JSON",
        help="AssemblyConfig overrides (e.g. density_min_memories_per_dimension=0: staged mode)",
    )
    r.add_argument("--limit-conversations", type=int, default=None)
    r.add_argument("--limit-questions", type=int, default=None)
    r.add_argument("--prompts", type=int, default=50, help="whole prompts kept (the first N)")
    r.add_argument("--out", required=True)
    c = sub.add_parser("compare", help="compare two replays")
    c.add_argument("old")
    c.add_argument("new")
    args = parser.parse_args(argv)
    return replay(args) if args.command == "replay" else compare(args)


if __name__ == "__main__":
    sys.exit(main())

"""Replay the recall benchmark's questions on spaces a run kept (``--keep-spaces``), and
compare two replays: the equivalence check of a refactor of the read side.

``replay`` asks every question of a result file's units, with each ``--configs`` preset, through
the harness's own adapter (:class:`benchmarks.mnemograph.MnemographSystem`, as the run asked
them, ``touch`` off), and writes per question the ranked memory ids, the scores, abstention,
intent and latency. Run it once with each code version on ``PYTHONPATH`` (run this file by
path, so the same tool drives either version; it takes its dataset and report helpers from
:mod:`benchmarks.replay_context` of that version) and ``compare`` the two files: every id list
and abstention must be equal; scores are compared to 1e-9; latencies are shown side by side.
Reads only: the spaces are never written. Use ``OMP_NUM_THREADS=1``: query embedding is only
reproducible single-threaded.

    OMP_NUM_THREADS=1 PYTHONPATH=OLD python benchmarks/replay_recall.py replay \\
        --result R.json --dataset locomo --neo4j-uri bolt://127.0.0.1:7799 --out old.json
    PYTHONPATH=NEW python benchmarks/replay_recall.py compare old.json new.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

SCORE_TOLERANCE = 1e-9

# Run by path, Python puts this folder first on sys.path, where ``cypher`` (the benchmark's
# statements) would shadow the product's ``cypher`` package: the code under test comes from
# PYTHONPATH alone.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]


def replay(args: argparse.Namespace) -> int:
    from benchmarks.instance import start_engine
    from benchmarks.mnemograph import MnemographSystem
    from benchmarks.replay_context import _dataset, _units
    from benchmarks.sut import query_input

    result = json.loads(Path(args.result).read_text(encoding="utf-8"))
    convs = {c.id: c for c in _dataset(args.dataset, args.path).conversations}
    engine = start_engine(args.neo4j_uri)
    system = MnemographSystem(engine, progress=False)
    rows: list[dict[str, Any]] = []
    try:
        units = _units(result, args.setting)[: args.limit_conversations]
        first = convs[units[0][1][0]].questions[0]
        for config in args.configs:  # models loaded, caches warm
            system.recall(units[0][0], query_input(first), config, args.k)
        for space, ids in units:
            for cid in ids:
                for q in convs[cid].questions[: args.limit_questions]:
                    for config in args.configs:
                        t0 = time.perf_counter()
                        r = system.recall(space, query_input(q), config, args.k)
                        ms = (time.perf_counter() - t0) * 1000.0
                        rows.append(
                            {
                                "key": f"{cid}/{q.id}/{config}",
                                "ids": [h.id for h in r.hits],
                                "scores": [h.score for h in r.hits],
                                "abstain": r.abstain,
                                "intent": r.intent,
                                "latency_ms": round(ms, 2),
                            }
                        )
            print(f"{space}: {len(rows)} recalls so far", flush=True)
    finally:
        system.close()
        engine.close()
    out = {"configs": args.configs, "k": args.k, "rows": rows}
    Path(args.out).write_text(json.dumps(out) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(rows)} recalls")
    return 0


def _scores_equal(a: list[float], b: list[float]) -> bool:
    pairs = zip(a, b, strict=True) if len(a) == len(b) else None
    return pairs is not None and all(abs(x - y) <= SCORE_TOLERANCE for x, y in pairs)


def compare(args: argparse.Namespace) -> int:
    from benchmarks.replay_context import _p

    old, new = (json.loads(Path(p).read_text(encoding="utf-8")) for p in (args.old, args.new))
    a = {r["key"]: r for r in old["rows"]}
    b = {r["key"]: r for r in new["rows"]}
    if set(a) != set(b):
        print(f"different questions: {len(set(a) ^ set(b))} keys in one file only")
    common = sorted(set(a) & set(b))
    diffs = {"ids": 0, "abstain": 0, "intent": 0, "scores": 0}
    for key in common:
        for field in ("ids", "abstain", "intent"):
            if a[key][field] != b[key][field]:
                diffs[field] += 1
                if diffs[field] <= 3:
                    print(f"{field} differs at {key}: {a[key][field]!r} vs {b[key][field]!r}")
        if not _scores_equal(a[key]["scores"], b[key]["scores"]):
            diffs["scores"] += 1
    print(f"{len(common)} recalls compared; differences: {diffs}")
    configs = sorted({k.rsplit("/", 1)[1] for k in common})
    for config in configs:
        keys = [k for k in common if k.endswith(f"/{config}")]
        for name, rows in (("old", a), ("new", b)):
            ms = [rows[k]["latency_ms"] for k in keys]
            print(
                f"{config} latency {name}: p50 {_p(ms, 0.5):.1f} ms, p95 {_p(ms, 0.95):.1f} ms, "
                f"mean {statistics.fmean(ms) if ms else 0:.1f} ms"
            )
    return 0 if not (diffs["ids"] or diffs["abstain"]) and set(a) == set(b) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/replay_recall.py")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("replay", help="ask every question of a kept run again")
    r.add_argument("--result", required=True, help="the run's result JSON")
    r.add_argument("--dataset", choices=["locomo", "beam"], required=True)
    r.add_argument("--path", default=None, help="the dataset (default: the benchmark's)")
    r.add_argument("--setting", default="per-conversation")
    r.add_argument("--configs", nargs="+", default=["full"], help="harness recall presets")
    r.add_argument("--k", type=int, default=10, help="results per recall (the harness: 10)")
    r.add_argument("--neo4j-uri", required=True)
    r.add_argument("--limit-conversations", type=int, default=None)
    r.add_argument("--limit-questions", type=int, default=None)
    r.add_argument("--out", required=True)
    c = sub.add_parser("compare", help="compare two replays")
    c.add_argument("old")
    c.add_argument("new")
    args = parser.parse_args(argv)
    return replay(args) if args.command == "replay" else compare(args)


if __name__ == "__main__":
    sys.exit(main())

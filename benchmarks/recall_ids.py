"""Read-path equivalence: the ranked ids a preset returns, and the ids the context assembler
includes at each budget, for every LoCoMo question; and a diff of two such dumps.

    python -m benchmarks.recall_ids dump --out ids.jsonl [--configs full] [--settings ...]
    python -m benchmarks.recall_ids compare before.jsonl after.jsonl

``dump`` ingests LoCoMo into fresh spaces of the benchmark Neo4j (``MNEMOGRAPH_BENCH_NEO4J_DIR``
and ``_PORT`` choose the instance; use a new directory for a fresh database) through the harness's
system under test and writes one JSON line per question and preset: the ids in rank order.
``compare`` reports how many questions return the same ids in the same order, and the first
differences. A refactor of the read path must compare equal against the code before it.

It uses only the harness's stable interface (``MnemographSystem``, ``runner.collect``), so the
same file can dump from an older checkout: ``PYTHONPATH=/old/checkout python path/to/this.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def dump(args: argparse.Namespace) -> int:
    from benchmarks import locomo
    from benchmarks.instance import neo4j_for_bench, start_engine
    from benchmarks.mnemograph import MnemographSystem
    from benchmarks.runner import ContextPlan, RunOptions, collect

    dataset, _ = locomo.load(args.path)
    options = RunOptions(
        configs=args.configs,
        settings=args.settings,
        context=bool(args.budgets),
        budgets=args.budgets or (1000,),
        workers=args.workers,
        progress=not args.no_progress,
    )
    with neo4j_for_bench(args.neo4j_uri) as neo:
        engine = start_engine(neo.uri, neo.auth)
        plans = []
        try:
            system = MnemographSystem(engine, progress=options.progress)
            if args.budgets:
                from benchmarks.context_bench import AssemblerContext

                plans = [ContextPlan(AssemblerContext(engine, "assembler"))]
            with args.out.open("w") as out:
                for setting in args.settings:
                    run = collect(system, dataset, setting, options, plans)
                    rows = sorted(
                        run.outcomes, key=lambda o: (o.config, o.conversation, o.question)
                    )
                    for o in rows:
                        line = {
                            "setting": setting,
                            "config": o.config,
                            "conversation": o.conversation,
                            "question": o.question,
                            "ids": list(o.ids),
                        }
                        out.write(json.dumps(line) + "\n")
                    ctx = sorted(
                        run.context, key=lambda o: (o.system, o.budget, o.conversation, o.question)
                    )
                    for c in ctx:
                        line = {
                            "setting": setting,
                            "config": f"context:{c.system}:{c.budget}",
                            "conversation": c.conversation,
                            "question": c.question,
                            "ids": list(c.ids),
                        }
                        out.write(json.dumps(line) + "\n")
        finally:
            for plan in plans:
                plan.system.close()
            engine.close()
    print(f"wrote {args.out}")
    return 0


def _load(path: Path) -> dict[tuple[str, str, str, str], list[str]]:
    out = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        key = (row["setting"], row["config"], row["conversation"], row["question"])
        out[key] = row["ids"]
    return out


def compare(args: argparse.Namespace) -> int:
    before, after = _load(args.before), _load(args.after)
    keys = sorted(set(before) | set(after))
    missing = [k for k in keys if k not in before or k not in after]
    same = [k for k in keys if before.get(k) == after.get(k)]
    same_set = [k for k in keys if set(before.get(k) or []) == set(after.get(k) or [])]
    print(f"questions: {len(keys)}; in one file only: {len(missing)}")
    print(f"same ids, same order: {len(same)}; same ids, any order: {len(same_set)}")
    for k in [k for k in keys if k not in same][: args.show]:
        print(f"  {k}:\n    before {before.get(k)}\n    after  {after.get(k)}")
    return 0 if len(same) == len(keys) else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.recall_ids", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump", help="ranked ids per LoCoMo question")
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--configs", nargs="+", default=["full"])
    d.add_argument("--settings", nargs="+", default=["per-conversation", "scale"])
    d.add_argument(
        "--budgets",
        nargs="*",
        type=int,
        default=[1000, 2000, 4000],
        help="context budgets: the assembler's (and the flat baseline's) included ids too",
    )
    d.add_argument("--path", default=None, help="LoCoMo file (default: the shared dataset)")
    d.add_argument("--neo4j-uri", default=None)
    d.add_argument("--workers", type=int, default=2)
    d.add_argument("--no-progress", action="store_true")
    c = sub.add_parser("compare", help="same ids in the same order?")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--show", type=int, default=10, help="differences to print")
    args = p.parse_args(argv)
    return dump(args) if args.cmd == "dump" else compare(args)


if __name__ == "__main__":
    sys.exit(main())

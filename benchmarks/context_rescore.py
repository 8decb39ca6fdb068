"""Context recall and precision again, on the spaces a harness run kept: no ingest.

    python -m benchmarks.context_rescore --dataset beam --run /work/base/base-beam.json \\
        --neo4j-uri bolt://127.0.0.1:7799 --budgets 1000 2000 4000 --name ctx-beam

For every conversation the run's result JSON (``--run``; run with ``--keep-spaces``) lists a
space for, every question goes, as :class:`~benchmarks.sut.ContextInput` (text, time, budget),
to the flat-recall baseline, the dense-RAG baseline and the assembler, as the harness's context
benchmark sends them; the outcomes are scored by :func:`benchmarks.runner.score` (context
recall, context precision). Reads only (recall with ``touch`` off). Measures the current code's
read path against a write path that ran before; ``--limit-questions N`` draws N questions of
each conversation at random (``--seed``), in their order. ``--variants`` and ``--overlay
assembler:facts_share=0.2`` put assembler variants side by side in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from benchmarks import machine
from benchmarks.format import Conversation, Dataset
from benchmarks.runner import ContextOutcome, RunOptions, SettingRun, UnitRun, score
from benchmarks.sut import ContextSystem, context_input, query_input

T = TypeVar("T")


def units_of_run(run: dict[str, Any], setting: str) -> list[UnitRun]:
    """The kept spaces of a result's ``setting``, with each conversation's id prefix."""
    try:
        entries = run["results"][setting]["ingest"]
    except KeyError:
        raise ValueError(f"the run has no setting {setting!r} with spaces") from None
    prefixed = setting == "scale"
    return [
        UnitRun(e["space"], [(c, f"{c}:" if prefixed else "") for c in e["conversations"]])
        for e in entries
    ]


def collect_kept(
    convs: Sequence[Conversation],
    units: Sequence[UnitRun],
    flat: Any,
    systems: Sequence[ContextSystem],
    budgets: Sequence[int],
    setting: str,
) -> SettingRun:
    """Phase 1 on kept spaces: question text, time and budget only."""
    run = SettingRun(setting=setting, units=list(units))
    by_id = {c.id: c for c in convs}
    run.context_status = {"flat": "run", **{s.name: "run" for s in systems}}
    t0 = time.perf_counter()
    for unit in units:
        unit.pool = dict(flat.system.pool_size(unit.space))
        for cid, _ in unit.conversations:
            if cid not in by_id:
                continue
            for q in by_id[cid].questions:
                fetched = flat.fetch(unit.space, query_input(q))
                for budget, ctx in flat.pack(fetched, budgets).items():
                    run.context.append(
                        ContextOutcome(cid, q.id, "flat", budget, tuple(ctx.memory_ids),
                                       ctx.used_tokens, ctx.latency_ms, spans=ctx.spans)
                    )  # fmt: skip
                for system in systems:
                    for budget in budgets:
                        ctx = system.assemble(unit.space, context_input(q, budget))
                        run.context.append(
                            ContextOutcome(cid, q.id, system.name, budget, tuple(ctx.memory_ids),
                                           ctx.used_tokens, ctx.latency_ms,
                                           ctx.report.get("mode"), ctx.spans)
                        )  # fmt: skip
            print(f"{cid} done ({time.perf_counter() - t0:.0f} s)", flush=True)
    run.seconds = time.perf_counter() - t0
    return run


def sample(items: Sequence[T], n: int, rng: random.Random) -> tuple[T, ...]:
    """``n`` of ``items`` drawn at random, in their order (all of them when fewer)."""
    if len(items) <= n:
        return tuple(items)
    keep = set(rng.sample(range(len(items)), n))
    return tuple(x for i, x in enumerate(items) if i in keep)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    p = argparse.ArgumentParser(prog="python -m benchmarks.context_rescore", description=__doc__)
    p.add_argument("--dataset", choices=("beam", "locomo", "generic"), default="beam")
    p.add_argument("--path", default=None)
    p.add_argument("--run", required=True)
    p.add_argument("--setting", default="per-conversation")
    p.add_argument("--budgets", nargs="+", type=int, default=[1000, 2000, 4000])
    p.add_argument(
        "--limit-questions", type=int, default=None, help="N questions drawn per conversation"
    )
    p.add_argument("--seed", type=int, default=1, help="seed of --limit-questions' draw")
    p.add_argument("--name", required=True)
    p.add_argument("--out-dir", type=Path, default=None)
    p.add_argument("--neo4j-uri", default=None)
    p.add_argument(
        "--variants", nargs="+", default=["assembler"],
        help="assembler variants (benchmarks.context_bench.ASSEMBLER_VARIANTS), side by side",
    )  # fmt: skip
    p.add_argument(
        "--overlay", action="append", default=[], metavar="VARIANT:KEY=VALUE[,KEY=VALUE]",
        help="one more variant: VARIANT with these assembly configuration values (JSON or text)",
    )  # fmt: skip
    args = p.parse_args(argv)

    from dataclasses import replace

    from benchmarks import reports
    from benchmarks.context_bench import AssemblerContext, FlatRecallContext
    from benchmarks.dense_rag import DenseRagContext
    from benchmarks.instance import neo4j_for_bench, start_engine
    from benchmarks.mnemograph import MnemographSystem
    from benchmarks.reader_judged import load_dataset

    dataset, source = load_dataset(args.dataset, args.path)
    if args.limit_questions:
        rng = random.Random(args.seed)
        dataset = replace(
            dataset,
            conversations=tuple(
                replace(c, questions=sample(c.questions, args.limit_questions, rng))
                for c in dataset.conversations
            ),
        )
    run_path = Path(args.run).resolve()
    units = units_of_run(json.loads(run_path.read_text(encoding="utf-8")), args.setting)
    budgets = sorted(set(args.budgets))
    started, load_start, code = machine.now_iso(), machine.load_average(), machine.code_version()
    with neo4j_for_bench(args.neo4j_uri, keep=True) as neo:
        engine = start_engine(neo.uri, neo.auth)
        system = MnemographSystem(engine, progress=False)
        contexts: list[Any] = [DenseRagContext(engine)]
        contexts += [AssemblerContext(engine, v) for v in args.variants]
        contexts += [AssemblerContext(engine, v, overlay=o) for v, o in map(overlay, args.overlay)]
        try:
            flat = FlatRecallContext(system)
            run = collect_kept(dataset.conversations, units, flat, contexts, budgets, args.setting)
        finally:
            for c in contexts:
                c.close()
            system.close()
            engine.close()
    scored = score(_only(dataset, units), run, RunOptions(configs=[], budgets=budgets))
    result = {
        "name": args.name,
        "kind": "recall",
        "command": "python -m benchmarks.context_rescore " + " ".join(sys.argv[1:]),
        "dataset": {"name": dataset.name, "path": str(source), "questions": len(
            {(co.conversation, co.question) for co in run.context})},
        "config": {"run": str(run_path), "budgets": budgets, "setting": args.setting,
                   "variants": [c.name for c in contexts],
                   "limit_questions": args.limit_questions, "seed": args.seed, "reads_only": True},
        "code": {**code, "note": f"read path of this code on the spaces of {run_path.name}"},
        "machine": machine.record(load_start),
        "started_at": started,
        "ended_at": machine.now_iso(),
        "durations_s": {"total": round(run.seconds, 1)},
        "results": {args.setting: scored},
    }  # fmt: skip
    out = args.out_dir or reports.RESULTS_DIR
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.name}.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    (out / f"{args.name}.md").write_text(reports.recall_markdown(result))
    print(reports.figures_markdown(result).split("![")[0])
    print(f"wrote {out / args.name}.json and .md")
    return 0


def overlay(spec: str) -> tuple[str, dict[str, Any]]:
    """``VARIANT:KEY=VALUE,KEY=VALUE`` as the variant and its values
    (:func:`benchmarks.mnemograph.override_tree`: JSON where they parse)."""
    from benchmarks.mnemograph import override_tree

    variant, _, pairs = spec.partition(":")
    try:
        values = override_tree([p for p in pairs.split(",") if p])
    except ValueError as exc:
        raise SystemExit(f"--overlay {spec!r}: {exc}") from None
    if not values:
        raise SystemExit(f"--overlay {spec!r} gives no KEY=VALUE")
    return variant, values


def _only(dataset: Dataset, units: Sequence[UnitRun]) -> Dataset:
    from dataclasses import replace

    kept = {cid for u in units for cid, _ in u.conversations}
    return replace(dataset, conversations=tuple(c for c in dataset.conversations if c.id in kept))


if __name__ == "__main__":
    sys.exit(main())

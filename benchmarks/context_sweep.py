"""Assembler variants side by side on the kept spaces of a harness run: context recall per
budget for each set of :class:`~pipelines.assemble.config.AssemblyConfig` overrides.

    python -m benchmarks.context_sweep --dataset beam --result RUN.json --neo4j-uri bolt://... \\
        [--setting per-conversation|scale] [--budgets 1000 2000 4000] \\
        [--variant NAME=FIELD=VALUE,FIELD=VALUE ...] [--phases] [--conversations N] \\
        [--out rows.json]

A run with ``--keep-spaces`` leaves one space per conversation; its result JSON names them.
Every question with evidence is assembled again, as the harness does (``headroom`` 1.0, no
safety margin), by the default configuration (``default``) and by each ``--variant``. Gold
evidence is used only to score, after the context was assembled: the share of questions with
a gold turn among the context's memory ids (``any``), with every gold turn (``all``), the
mean number of memories and the median latency.

``--phases`` asks for the assembler's explanation and measures what Phase 2 (related prior
stages: PageRank from the current stage's entities, fused with whole-space recall) brings to
the staged calls: the share of staged calls whose Phase 2 included a gold turn, one that a
PageRank candidate brought, and one while Phase 1 had none.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.context_bench import included_memory_ids
from benchmarks.mnemograph import override_tree
from benchmarks.signals import kept_spaces, load_dataset


def parse_variant(text: str) -> tuple[str, dict[str, Any]]:
    """``NAME=FIELD=VALUE,FIELD=VALUE`` as a name and its overrides
    (:func:`~benchmarks.mnemograph.override_tree`)."""
    name, sep, rest = text.partition("=")
    if not sep or not name or not rest:
        raise ValueError(f"expected NAME=FIELD=VALUE[,FIELD=VALUE], got {text!r}")
    return name, override_tree(rest.split(","))


def gold_ids(conversation: str, evidence: Sequence[str], setting: str) -> set[str]:
    """The memory ids of a question's evidence turns: in the ``scale`` setting every
    conversation shares one space and its ids carry ``<conversation id>:``
    (:mod:`benchmarks.runner`)."""
    prefix = f"{conversation}:" if setting == "scale" else ""
    return {f"{prefix}{e}" for e in evidence}


def score(gold: set[str], ids: Sequence[str]) -> tuple[bool, bool]:
    shown = set(ids)
    return bool(gold & shown), gold <= shown


PHASE_COUNTS = ("staged", "phase2_included", "phase2_gold", "ppr_gold", "phase2_only_gold")


def tally_phases(counts: dict[str, int], report: Any, gold: set[str]) -> None:
    """Add one explained call to ``counts`` (:data:`PHASE_COUNTS`): whether it was staged,
    whether Phase 2 included memories, a gold turn, a gold turn PageRank brought (its item
    carries a ``ppr_mass``), and a gold turn while Phase 1 included none."""
    if report.mode != "staged":
        return
    counts["staged"] += 1
    phases = report.phases

    def included(phase: Any) -> list[Any]:
        items = getattr(phase, "items", None)
        listed = items if isinstance(items, list) else []
        return [i for i in listed if getattr(i, "selected", False) is True]

    related = included(getattr(phases, "related_prior", None))
    own = {i.id for i in included(getattr(phases, "current_stage", None))}
    counts["phase2_included"] += bool(related)
    found = [i for i in related if i.id in gold]
    counts["phase2_gold"] += bool(found)
    counts["ppr_gold"] += any(isinstance(i.ppr_mass, float) for i in found)
    counts["phase2_only_gold"] += bool(found) and not own & gold


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", choices=["generic", "locomo", "beam"], required=True)
    p.add_argument("--path", default=None, help="the dataset (default: the shared one)")
    p.add_argument("--result", required=True, help="result JSON of a --keep-spaces run")
    p.add_argument("--neo4j-uri", required=True)
    p.add_argument("--budgets", nargs="+", type=int, default=[1000, 2000, 4000])
    p.add_argument("--variant", action="append", default=[], help="NAME=FIELD=VALUE,...")
    p.add_argument("--setting", default="per-conversation", choices=["per-conversation", "scale"])
    p.add_argument("--phases", action="store_true", help="measure what Phase 2 brings")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--conversations", type=int, default=None, help="the first N only")
    args = p.parse_args(argv)

    from benchmarks.instance import start_engine
    from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG
    from pipelines.assemble.request import ContextRequest
    from pipelines.assemble.service import Assembler
    from pipelines.overrides import merge_overrides

    variants = [("default", {}), *(parse_variant(v) for v in args.variant)]
    dataset = load_dataset(args.dataset, args.path)
    spaces = kept_spaces(json.loads(Path(args.result).read_text()), args.setting)
    engine = start_engine(args.neo4j_uri)
    pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="sweep-assemble")
    assemblers = {
        name: Assembler(
            engine,
            read_ahead=pool,
            config=merge_overrides(
                DEFAULT_ASSEMBLY_CONFIG, {"safety_margin": 0, **over}, "assembly"
            ),
        )
        for name, over in variants
    }
    tallies: dict[tuple[str, int], list[Any]] = {
        (name, b): [0, 0, 0, 0, []] for name in assemblers for b in args.budgets
    }
    phases: dict[tuple[str, int], dict[str, int]] = {
        key: dict.fromkeys(PHASE_COUNTS, 0) for key in tallies
    }
    load_start = os.getloadavg()[0]
    try:
        from tqdm import tqdm

        convs = [c for c in dataset.conversations if c.id in spaces][: args.conversations]
        total = sum(1 for c in convs for q in c.questions if q.evidence)
        with tqdm(total=total, desc="questions", unit="q") as bar:
            for conv in convs:
                for q in conv.questions:
                    if not q.evidence:
                        continue
                    gold = gold_ids(conv.id, q.evidence, args.setting)
                    for name, assembler in assemblers.items():
                        for budget in args.budgets:
                            fields: dict[str, Any] = {
                                "query": q.text,
                                "context_window": budget,
                                "headroom": 1.0,
                            }
                            if q.question_time is not None:
                                fields["now"] = q.question_time
                            if args.phases:
                                fields["explain"] = True
                            t0 = time.perf_counter()
                            resp = assembler.assemble(spaces[conv.id], ContextRequest(**fields))
                            ms = (time.perf_counter() - t0) * 1000
                            ids = included_memory_ids(resp)
                            any_, all_ = score(gold, ids)
                            t = tallies[(name, budget)]
                            t[0] += any_
                            t[1] += all_
                            t[2] += 1
                            t[3] += len(ids)
                            t[4].append(ms)
                            if args.phases:
                                tally_phases(phases[(name, budget)], resp.report, gold)
                    bar.update(1)
    finally:
        pool.shutdown(wait=True)
        engine.close()
    rows = [
        {
            "variant": name,
            "overrides": dict(variants)[name],
            "budget": budget,
            "n": t[2],
            "any": round(t[0] / t[2], 4) if t[2] else None,
            "all": round(t[1] / t[2], 4) if t[2] else None,
            "memories_mean": round(t[3] / t[2], 1) if t[2] else None,
            "p50_ms": round(statistics.median(t[4]), 1) if t[4] else None,
            **({"phases": phases[(name, budget)]} if args.phases else {}),
        }
        for (name, budget), t in tallies.items()
    ]
    load = f"load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    print(f"| variant | budget | any | all | memories | p50 ms |  ({load})")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['variant']} | {r['budget']} | {r['any']} | {r['all']} | "
            f"{r['memories_mean']} | {r['p50_ms']} |"
        )
    if args.phases:
        print("| variant | budget | staged | Phase 2 included | gold by Phase 2 | by PageRank "
              "| gold only by Phase 2 |")  # fmt: skip
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            c = r["phases"]
            print(
                f"| {r['variant']} | {r['budget']} | {c['staged']} | {c['phase2_included']} | "
                f"{c['phase2_gold']} | {c['ppr_gold']} | {c['phase2_only_gold']} |"
            )
    if args.out:
        args.out.write_text(json.dumps({"load": load, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

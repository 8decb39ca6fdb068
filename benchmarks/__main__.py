"""Mnemograph benchmarks.

    python -m benchmarks locomo [options]                      # LoCoMo (make bench-locomo)
    python -m benchmarks run --dataset generic --path FILE     # any generic-format dataset
    python -m benchmarks run --dataset locomo [--path FILE]    # the same as `locomo`
    python -m benchmarks run --dataset beam [--path DIR]       # BEAM-100K (make bench-beam)
    python -m benchmarks perf [--sizes 1000 10000 100000]      # speed (make bench-perf)
    python -m benchmarks validate --path FILE                  # check a generic-format file
    python -m benchmarks convert-locomo --out FILE             # LoCoMo → generic JSON
    python -m benchmarks convert-beam --out FILE               # BEAM → generic JSON
    python -m benchmarks report --json benchmarks/results/X.json   # re-render .md and plots
    python -m benchmarks figures --json benchmarks/results/X.json  # tables for BENCHMARKS.md
    python -m benchmarks chaos [--neo4j-trials 20 --api-trials 10]  # kill -9 trials (reliability)
    python -m benchmarks load [--spaces 50 --duration 300]      # open-loop mixed load
    python -m benchmarks fuzz [--max-examples 25 --seed 1]      # schemathesis on the OpenAPI spec

Results go to benchmarks/results/<name>.{json,md} and <name>-*.png. See BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = Path(__file__).resolve().parents[1]


def _common(p: argparse.ArgumentParser) -> None:
    from benchmarks.runner import DEFAULT_BUDGETS, SETTINGS
    from benchmarks.speaker_export import STYLES

    p.add_argument(
        "--configs",
        nargs="*",
        default=None,
        help="recall configurations to run (default: all of benchmarks.presets: fulltext "
        "dense fused fused_rerank fast full; none given: the context benchmark only)",
    )
    p.add_argument(
        "--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS), help="settings"
    )
    p.add_argument("--budgets", nargs="+", type=int, default=list(DEFAULT_BUDGETS))
    p.add_argument("--no-context", action="store_true", help="skip the context benchmark")
    p.add_argument(
        "--no-reference",
        action="store_true",
        help="skip the in-memory reference baselines (exact dense, BM25)",
    )
    p.add_argument("--context-preset", default="full", help="preset the flat baseline packs")
    p.add_argument(
        "--no-dense-rag",
        action="store_true",
        help="skip the dense-RAG context baseline (dense recall, best chunk of long memories, "
        "packed into the budget: benchmarks/dense_rag.py)",
    )
    p.add_argument("--flat-k", type=int, default=100, help="recall results the flat baseline packs")
    p.add_argument(
        "--assembler-variants",
        nargs="*",
        default=["assembler"],
        help="assembler variants run at every budget in every setting",
    )
    p.add_argument(
        "--scale-variants",
        nargs="*",
        default=["assembler-flat"],
        help="variants run at every budget in the scale setting only (assembler-flat: the "
        "assembler's own flat mode, same rendering; per conversation the density gate makes "
        "the assembler flat anyway)",
    )
    p.add_argument(
        "--ablation-settings",
        nargs="*",
        default=["scale"],
        help="settings that also run the assembler ablations (no selection / PPR / summaries "
        "/ facts)",
    )
    p.add_argument(
        "--ablation-budgets", nargs="+", type=int, default=[2000], help="budgets of the ablations"
    )
    p.add_argument("--limit-conversations", type=int, default=None, help="first N conversations")
    p.add_argument(
        "--limit-questions", type=int, default=None, help="first N questions per conversation"
    )
    p.add_argument("--name", default=None, help="result name (default: the dataset name)")
    p.add_argument("--out-dir", type=Path, default=None, help="default benchmarks/results")
    p.add_argument("--neo4j-uri", default=None, help="use this Neo4j instead of the bench one")
    p.add_argument("--keep-neo4j", action="store_true", help="leave the bench Neo4j running")
    p.add_argument("--keep-spaces", action="store_true", help="do not delete benchmark spaces")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="questions in flight at once (threads); latencies then include contention",
    )
    p.add_argument(
        "--recall-set",
        nargs="+",
        default=[],
        metavar="FIELD=VALUE",
        help="override RecallConfig fields for the recall configurations, e.g. "
        "fusion.question_turn_factor=1 (a sweep through the harness; the assembler keeps "
        "its own)",
    )
    p.add_argument(
        "--speaker-export",
        choices=list(STYLES),
        default=None,
        help="rename every speaker as a chat export shows it (full-name: 'Caroline Reyes', "
        "handle: 'caroline.reyes42', phone: '+1 555 0142'); texts and questions keep the "
        "names people use",
    )
    p.add_argument("--no-progress", action="store_true")


def _limit(dataset, n_conv: int | None, n_q: int | None):
    from dataclasses import replace

    convs = dataset.conversations[:n_conv] if n_conv else dataset.conversations
    if n_q:
        convs = tuple(replace(c, questions=c.questions[:n_q]) for c in convs)
    return replace(dataset, conversations=tuple(convs))


def _preset_description(presets: dict[str, Any], name: str) -> Any:
    p = presets.get(name)
    for attr in ("model_dump", "dict"):
        fn = getattr(p, attr, None)
        if callable(fn):
            try:
                return fn(mode="json") if attr == "model_dump" else fn()
            except TypeError:
                return fn()
    return repr(p)


def _context_plans(engine: Any, args: argparse.Namespace) -> tuple[list, str | None]:
    """The dense-RAG baseline and the assembler variants to run, or the reason no assembler
    variant can run."""
    from benchmarks.context_bench import (
        ABLATION_VARIANTS,
        AssemblerContext,
        ContextBenchUnavailable,
    )
    from benchmarks.dense_rag import DenseRagContext
    from benchmarks.runner import ContextPlan

    plans = [] if args.no_dense_rag else [ContextPlan(DenseRagContext(engine))]
    try:
        for v in args.assembler_variants:
            plans.append(ContextPlan(AssemblerContext(engine, v)))
        for v in args.scale_variants:
            plans.append(ContextPlan(AssemblerContext(engine, v), settings=["scale"]))
        if args.ablation_settings:
            for v in ABLATION_VARIANTS:
                plans.append(
                    ContextPlan(
                        AssemblerContext(engine, v),
                        budgets=sorted(set(args.ablation_budgets)),
                        settings=list(args.ablation_settings),
                    )
                )
    except ContextBenchUnavailable as exc:
        return plans[:1] if not args.no_dense_rag else [], str(exc)
    return plans, None


def run_recall(args: argparse.Namespace, dataset, source: dict[str, Any]) -> int:
    from dataclasses import replace

    from benchmarks import machine, reports
    from benchmarks.baselines import REFERENCE_CONFIGS, ReferenceBaselines
    from benchmarks.instance import neo4j_for_bench, preexisting_memories, start_engine
    from benchmarks.mnemograph import (
        RECALL_PRESETS,
        MnemographSystem,
        recall_overrides,
        recall_presets,
    )
    from benchmarks.runner import RunOptions, run_benchmark, summary_keys
    from benchmarks.speaker_export import export_speakers

    try:
        recall_config = recall_overrides(args.recall_set)
    except ValueError as exc:
        print(f"error: --recall-set: {exc}", file=sys.stderr)
        return 2
    presets = recall_presets()
    configs = [p for p in RECALL_PRESETS if p in presets] if args.configs is None else args.configs
    if not configs and args.no_context:
        print("error: nothing to run (no recall configs and --no-context)", file=sys.stderr)
        return 2
    unknown = [c for c in configs if c not in presets]
    if unknown:
        print(
            f"error: unknown recall preset(s) {unknown}; available: {sorted(presets)}",
            file=sys.stderr,
        )
        return 2
    dataset = _limit(dataset, args.limit_conversations, args.limit_questions)
    dataset = export_speakers(dataset, args.speaker_export)
    name = args.name or dataset.name
    options = RunOptions(
        configs=configs,
        settings=args.settings,
        budgets=sorted(set(args.budgets)),
        context=not args.no_context,
        context_preset=args.context_preset,
        flat_k=args.flat_k,
        keep_spaces=args.keep_spaces,
        progress=not args.no_progress,
        workers=max(1, args.workers),
    )
    started = machine.now_iso()
    load_start = machine.load_average()
    code = machine.code_version()  # the code this process loaded, before the run
    reference_seconds = None
    t0 = time.perf_counter()
    with neo4j_for_bench(args.neo4j_uri, keep=args.keep_neo4j) as neo:
        engine = start_engine(neo.uri, neo.auth)
        preexisting_memories(engine, neo)
        system = MnemographSystem(engine, progress=options.progress, recall_config=recall_config)
        plans: list[Any] = []
        try:
            plans, context_error = _context_plans(engine, args) if options.context else ([], None)
            if context_error:
                print(f"note: {context_error}; running the flat baseline only", file=sys.stderr)
            readiness = engine.readiness()
            t_run = time.perf_counter()
            results = run_benchmark(system, dataset, options, plans, context_error)
            run_seconds = time.perf_counter() - t_run
            if not args.no_reference and configs:
                t_ref = time.perf_counter()
                ref = run_benchmark(
                    ReferenceBaselines(engine.embedder),
                    dataset,
                    replace(options, configs=list(REFERENCE_CONFIGS), context=False, workers=1),
                )
                for setting, res in ref.items():
                    results[setting]["configs"].update(res["configs"])
                    results[setting]["reference_seconds"] = res["seconds"]
                reference_seconds = time.perf_counter() - t_ref
        finally:
            for plan in plans:
                plan.system.close()
            system.close()
            engine.close()
        neo_desc = neo.describe()
    total = time.perf_counter() - t0
    result = {
        "name": name,
        "kind": "recall",
        "command": "python -m benchmarks " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "dataset": {
            "name": dataset.name,
            **source,
            "conversations": len(dataset.conversations),
            "sessions": dataset.session_count,
            "turns": dataset.turn_count,
            "questions": dataset.question_count,
            "meta": dict(dataset.meta),
        },
        "config": {
            "configs": configs,
            "settings": list(options.settings),
            "ks": list(options.ks),
            "recall_k": max(options.ks),
            "budgets": list(options.budgets),
            "context": options.context,
            "context_preset": options.context_preset,
            "flat_k": options.flat_k,
            "assembler_variants": list(args.assembler_variants),
            "dense_rag": not args.no_dense_rag,
            "scale_variants": list(args.scale_variants),
            "workers": options.workers,
            "ablation_settings": list(args.ablation_settings),
            "ablation_budgets": sorted(set(args.ablation_budgets)),
            "limit_conversations": args.limit_conversations,
            "limit_questions": args.limit_questions,
            "speaker_export": args.speaker_export,
            "presets": {c: _preset_description(presets, c) for c in configs},
            "reranker_active": readiness.get("reranker_active"),
            "models": readiness.get("models"),
            "neo4j": {**neo_desc, "version": (readiness.get("neo4j") or {}).get("version")},
            "ingest": "Ingestor.ingest_sessions, gate off",
            "recall": "Recaller.recall, touch=False, now=question_time",
            "reference_baselines": [] if args.no_reference else list(REFERENCE_CONFIGS),
        },
        "code": code,
        "machine": machine.record(load_start),
        "started_at": started,
        "ended_at": machine.now_iso(),
        "durations_s": {
            "total": round(total, 1),
            "benchmark": round(run_seconds, 1),
            "reference_baselines": round(reference_seconds, 1) if reference_seconds else None,
            **{s: r.get("seconds") for s, r in results.items()},
        },
        "summary": summary_keys(results),
        "results": results,
    }
    out_dir = args.out_dir or reports.RESULTS_DIR
    files = reports.write_recall_report(result, out_dir)
    print(json.dumps(result["summary"], indent=2))
    print(f"total {total:.0f} s; wrote " + ", ".join(str(p) for p in files.values()))
    return 0


def cmd_locomo(args: argparse.Namespace) -> int:
    from benchmarks import locomo

    try:
        path = locomo.resolve_path(args.path)
    except locomo.LocomoUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    dataset, report = locomo.convert(json.loads(path.read_text(encoding="utf-8")))
    print(
        f"LoCoMo: {report.conversations} conversations, {report.sessions} sessions, "
        f"{report.turns} turns, {report.questions} questions; evidence: {report.evidence_split} "
        f"split, {report.evidence_normalised} reformatted, {len(report.evidence_unresolved)} "
        f"unresolved, {report.questions_without_evidence} questions without evidence",
        flush=True,
    )
    return run_recall(args, dataset, {"path": str(path), "format": "locomo (converted)"})


def cmd_beam(args: argparse.Namespace) -> int:
    from benchmarks import beam

    try:
        dataset, report = beam.load(args.path)
    except beam.BeamUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"BEAM: {report.conversations} conversations, {report.sessions} sessions, "
        f"{report.turns} turns (longest {report.longest_turn_chars:,} characters), "
        f"{report.questions} questions; {report.questions_without_evidence} without evidence, "
        f"{len(report.evidence_unresolved)} evidence ids unresolved",
        flush=True,
    )
    path = beam.resolve_path(args.path)
    return run_recall(args, dataset, {"path": str(path), "format": "beam (converted)"})


def cmd_run(args: argparse.Namespace) -> int:
    if args.dataset == "locomo":
        return cmd_locomo(args)
    if args.dataset == "beam":
        return cmd_beam(args)
    from benchmarks.format import FormatError, load_dataset

    if not args.path:
        print("error: --path is required for --dataset generic", file=sys.stderr)
        return 2
    try:
        dataset = load_dataset(args.path)
    except (FormatError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return run_recall(args, dataset, {"path": str(Path(args.path).resolve()), "format": "generic"})


def cmd_validate(args: argparse.Namespace) -> int:
    from benchmarks.format import FormatError, load_dataset

    try:
        ds = load_dataset(args.path)
    except (FormatError, FileNotFoundError) as exc:
        print(f"invalid: {exc}", file=sys.stderr)
        return 1
    no_ev = sum(1 for c in ds.conversations for q in c.questions if not q.evidence)
    print(
        f"ok: {ds.name}: {len(ds.conversations)} conversations, {ds.session_count} sessions, "
        f"{ds.turn_count} turns, {ds.question_count} questions ({no_ev} without evidence)"
    )
    return 0


def cmd_convert_locomo(args: argparse.Namespace) -> int:
    from benchmarks import locomo
    from benchmarks.format import dataset_to_json

    out = Path(args.out).resolve()
    if REPO_ROOT in out.parents and not args.allow_inside_repo:
        print(
            "error: LoCoMo is CC BY-NC 4.0 and must not be copied into the repository; write "
            "the converted file elsewhere (or pass --allow-inside-repo for a git-ignored path)",
            file=sys.stderr,
        )
        return 2
    try:
        dataset, report = locomo.load(args.path)
    except locomo.LocomoUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out.write_text(json.dumps(dataset_to_json(dataset), indent=1) + "\n")
    print(f"wrote {out}: {json.dumps(report.as_dict())}")
    return 0


def cmd_convert_beam(args: argparse.Namespace) -> int:
    from benchmarks import beam
    from benchmarks.format import dataset_to_json

    out = Path(args.out).resolve()
    if REPO_ROOT in out.parents and not args.allow_inside_repo:
        print(
            "error: BEAM states no licence and is for evaluation only: it must not be copied "
            "into the repository; write the converted file elsewhere (or pass "
            "--allow-inside-repo for a git-ignored path)",
            file=sys.stderr,
        )
        return 2
    try:
        dataset, report = beam.load(args.path)
    except beam.BeamUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out.write_text(json.dumps(dataset_to_json(dataset), indent=1) + "\n")
    summary = {k: v for k, v in report.as_dict().items() if k != "evidence_unresolved"}
    print(f"wrote {out}: {json.dumps(summary)}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from benchmarks import reports

    result = json.loads(Path(args.json).read_text())
    out_dir = Path(args.json).resolve().parent
    if result.get("kind") == "perf":
        from benchmarks import perf

        files = perf.write_perf_report(result, out_dir)
    else:
        files = reports.write_recall_report(result, out_dir)
    print("wrote " + ", ".join(str(p) for p in files.values()))
    return 0


def cmd_figures(args: argparse.Namespace) -> int:
    from benchmarks import reports

    for path in args.json:
        result = json.loads(Path(path).read_text())
        if result.get("kind") == "perf":
            from benchmarks import perf

            print(perf.perf_markdown(result, [], heading=False))
        else:
            print(reports.figures_markdown(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    from benchmarks import chaos, consolidation, fuzz, knowledge_update, load, perf

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("locomo", help="LoCoMo retrieval and context benchmark")
    p.add_argument("--path", default=None, help="locomo10.json (default: shared dataset)")
    _common(p)
    p.set_defaults(func=cmd_locomo)
    p = sub.add_parser("run", help="run a dataset (generic format or locomo)")
    p.add_argument("--dataset", choices=["generic", "locomo", "beam"], default="generic")
    p.add_argument(
        "--path",
        default=None,
        help="generic: the JSON file; locomo: locomo10.json; beam: the split folder",
    )
    _common(p)
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("validate", help="validate a generic-format dataset file")
    p.add_argument("--path", required=True)
    p.set_defaults(func=cmd_validate)
    p = sub.add_parser("convert-locomo", help="write LoCoMo in the generic format")
    p.add_argument("--path", default=None)
    p.add_argument("--out", required=True)
    p.add_argument("--allow-inside-repo", action="store_true")
    p.set_defaults(func=cmd_convert_locomo)
    p = sub.add_parser("convert-beam", help="write BEAM (a split folder) in the generic format")
    p.add_argument("--path", default=None, help="the split folder (default: shared BEAM-100K)")
    p.add_argument("--out", required=True)
    p.add_argument("--allow-inside-repo", action="store_true")
    p.set_defaults(func=cmd_convert_beam)
    p = sub.add_parser("report", help="re-render markdown and plots from a result JSON")
    p.add_argument("--json", required=True)
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("figures", help="print compact markdown tables for BENCHMARKS.md")
    p.add_argument("--json", nargs="+", required=True)
    p.set_defaults(func=cmd_figures)
    # benchmarks that own their options: (command, help, module with add_arguments and main)
    for command, help_text, module in (
        ("perf", "ingest throughput and latency against corpus size", perf),
        (
            "knowledge-update",
            "synthetic update sequences, with and without supersession",
            knowledge_update,
        ),
        ("consolidation", "a timed full consolidation pass, per job", consolidation),
        ("chaos", "kill -9 of Neo4j and of the API mid-ingest and mid-job", chaos),
        ("load", "open-loop mixed load: capacity, then twice the capacity", load),
        ("fuzz", "schemathesis over the OpenAPI spec (bounded, seeded)", fuzz),
    ):
        p = sub.add_parser(command, help=help_text)
        module.add_arguments(p)
        p.set_defaults(func=module.main)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())

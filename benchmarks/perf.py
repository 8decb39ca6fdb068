"""Speed benchmark (``make bench-perf`` = ``python -m benchmarks perf``).

(a) **Ingest throughput** on LoCoMo and BEAM-100K (:mod:`benchmarks.perf_ingest`): per
    conversation, ``Ingestor.ingest_sessions`` (fresh space, gate off) against the bare
    embedder on exactly the texts ingest embeds, side by side, with the load average, and what
    ingest stored per 100 memories (entities, mentions, co-occurrence edges, chunks).
(b) **Latency against corpus size**: one space filled with the synthetic corpus
    (:mod:`benchmarks.synth`) to each size (1K, 10K, 100K memories by default, incrementally),
    then for a fixed set of queries: ``/recall`` p50/p95 through the HTTP API (FastAPI app
    in-process with TestClient; ``--via service`` calls ``Recaller`` directly), the bare
    ``db.index.vector.queryNodes`` call (``benchmarks/cypher/vector_query.cypher``, query embedding
    precomputed, and separately with the embedding time added) and their ratio, ``/context``
    latency when the assembler exists, and the peak RSS (``VmHWM``) of the API process (this
    process: the app runs in-process, so the figure includes the harness and the models) and
    of the Neo4j process.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks import machine
from benchmarks import metrics as M

DEFAULT_SIZES = (1000, 10_000, 100_000)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sizes", nargs="+", type=int, default=list(DEFAULT_SIZES))
    p.add_argument("--queries", type=int, default=40, help="distinct queries per size")
    p.add_argument("--repeats", type=int, default=3, help="passes over the queries per size")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--context-window", type=int, default=4000)
    p.add_argument(
        "--via",
        choices=["auto", "http", "service"],
        default="auto",
        help="recall through the HTTP API (auto: when the route exists) or the service",
    )
    p.add_argument("--batch-turns", type=int, default=2000, help="turns per ingest call")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--space",
        default=None,
        help="measure latency on this existing space at its current size (no filling; e.g. the "
        "space a previous run kept with --keep-spaces)",
    )
    p.add_argument(
        "--ingest-datasets",
        nargs="*",
        default=["locomo", "beam"],
        choices=["locomo", "beam"],
        help="datasets of the ingest benchmark (a); none: skip it",
    )
    p.add_argument("--skip-locomo", action="store_true", help="skip the ingest benchmark (a)")
    p.add_argument("--skip-latency", action="store_true", help="skip the latency benchmark (b)")
    p.add_argument("--locomo-path", default=None)
    p.add_argument("--beam-path", default=None, help="BEAM split folder (default: shared 100K)")
    p.add_argument("--name", default="perf")
    p.add_argument("--out-dir", type=Path, default=None)
    p.add_argument("--neo4j-uri", default=None)
    p.add_argument("--keep-neo4j", action="store_true")
    p.add_argument("--keep-spaces", action="store_true")
    p.add_argument("--no-progress", action="store_true")


# ------------------------------------------------------------------------------ (a) ingest


def ingest_throughput(
    engine: Any, system: Any, dataset: Any, progress: bool, warm_up_turns: int = 300
) -> dict[str, Any]:
    """Ingest against the bare embedder on one dataset (:mod:`benchmarks.perf_ingest`), after
    ``warm_up_turns`` untimed synthetic turns (:func:`warm_up_graph`)."""
    from benchmarks.perf_ingest import dataset_ingest

    engine.embedder.encode(["warm-up sentence"] * 8)
    system.ingestor.extractor.extract_batch(["Warm-up with Alice in Paris."])
    warm_up_graph(system, warm_up_turns)
    return dataset_ingest(engine, system, dataset.name, dataset, progress)


def warm_up_graph(system: Any, turns: int = 300) -> None:
    """Ingest ``turns`` synthetic turns into a throwaway space, untimed: a freshly started
    Neo4j plans and compiles each write statement on first use, which would otherwise be
    charged to the first conversation measured."""
    from benchmarks import synth

    space = f"perf-{uuid.uuid4().hex[:8]}-warm-up"
    try:
        system.prepare(space, synth.take(turns, synth.SynthConfig(seed=1)))
    finally:
        system.drop(space)


def _ingest_datasets(args: argparse.Namespace) -> tuple[list[tuple[str, Any]], dict[str, str]]:
    """The datasets of the ingest benchmark, and why any could not be loaded."""
    from benchmarks import beam, locomo

    loaders = {
        "locomo": lambda: locomo.load(args.locomo_path)[0],
        "beam": lambda: beam.load(args.beam_path)[0],
    }
    out, missing = [], {}
    for name in args.ingest_datasets:
        try:
            out.append((name, loaders[name]()))
        except FileNotFoundError as exc:
            missing[name] = f"unavailable: {exc}"
            print(f"note: {name} {missing[name]}", file=sys.stderr)
    return out, missing


# ----------------------------------------------------------------------------- (b) latency


class _Recall:
    """Recall through HTTP (TestClient, the app in-process) or the service."""

    def __init__(self, engine: Any, via: str, k: int, context_window: int) -> None:
        from fastapi.testclient import TestClient

        from app.main import create_app
        from app.settings import Settings

        self.k = k
        self.context_window = context_window
        self.context_error: str | None = None
        self._assembler = None
        self.recall_note = ""
        app = create_app(Settings(neo4j_uri=engine.store.config.uri, api_keys=""), engine)
        paths = set(app.openapi().get("paths", {}))  # routers may be mounted, not flat routes
        has_recall = "/v1/spaces/{space}/recall" in paths
        has_context = "/v1/spaces/{space}/context" in paths
        if via == "http" and not has_recall:
            raise RuntimeError("the API has no /v1/spaces/{space}/recall route; use --via service")
        if via == "auto":
            via = "http" if has_recall else "service"
            if not has_recall:
                self.recall_note = " (the API has no /recall route yet)"
        self.via = via
        self.context_via: str | None = "http" if via == "http" and has_context else None
        self.client = None
        if self.via == "http" or self.context_via == "http":
            self.client = TestClient(app)
            self.client.__enter__()
        if self.via == "service":
            from pipelines.recall.request import RecallRequest
            from pipelines.recall.service import open_recaller

            self.request_cls = RecallRequest
            self.recaller, self.close_recaller = open_recaller(engine)
        if self.context_via is None:
            from benchmarks.context_bench import AssemblerContext, ContextBenchUnavailable

            try:
                self._assembler = AssemblerContext(engine)
                self.context_via = "service"
            except ContextBenchUnavailable as exc:
                self.context_error = str(exc)

    def close(self) -> None:
        if self.client is not None:
            self.client.__exit__(None, None, None)
        if self.via == "service":
            self.close_recaller()
        if self._assembler is not None:
            self._assembler.close()

    def recall(self, space: str, query: str) -> tuple[float, dict[str, float]]:
        t0 = time.perf_counter()
        if self.via == "http":
            r = self.client.post(  # type: ignore[union-attr]
                f"/v1/spaces/{space}/recall", json={"query": query, "k": self.k, "touch": False}
            )
            ms = (time.perf_counter() - t0) * 1000
            if r.status_code != 200:
                raise RuntimeError(f"recall returned {r.status_code}: {r.text[:300]}")
            timings = r.json().get("timings_ms") or {}
        else:
            resp = self.recaller.recall(space, self.request_cls(query=query, k=self.k, touch=False))
            ms = (time.perf_counter() - t0) * 1000
            timings = dict(getattr(resp, "timings_ms", None) or {})
        return ms, {k: float(v) for k, v in timings.items() if isinstance(v, int | float)}

    def context(self, space: str, query: str) -> tuple[float, str | None] | None:
        """Milliseconds of one ``/context`` call and the mode the assembler chose."""
        if self.context_via == "http":
            t0 = time.perf_counter()
            r = self.client.post(  # type: ignore[union-attr]
                f"/v1/spaces/{space}/context",
                json={"query": query, "context_window": self.context_window},
            )
            ms = (time.perf_counter() - t0) * 1000
            if r.status_code != 200:
                raise RuntimeError(f"context returned {r.status_code}: {r.text[:300]}")
            return ms, (r.json().get("report") or {}).get("mode")
        if self.context_via == "service":
            from benchmarks.sut import ContextInput

            t0 = time.perf_counter()
            got = self._assembler.assemble(space, ContextInput(query, None, self.context_window))  # type: ignore[union-attr]
            ms = (time.perf_counter() - t0) * 1000
            return ms, (getattr(got, "report", None) or {}).get("mode")
        return None


def measure_latency(
    engine: Any, caller: _Recall, space: str, queries: list[str], repeats: int, warmup: int, k: int
) -> dict[str, Any]:
    from benchmarks.cypher import statements

    store = statements(engine.store)
    embeddings = {q: engine.embedder.encode([q])[0].tolist() for q in queries}
    for q in queries[:warmup]:
        caller.recall(space, q)
        store.read("vector_query", space=space, embedding=embeddings[q], k=k, fetch=k)
        caller.context(space, q)
    recall_ms: list[float] = []
    bare_ms: list[float] = []
    bare_emb_ms: list[float] = []
    context_ms: list[float] = []
    context_mode_ms: dict[str, list[float]] = {}
    stage_ms: dict[str, list[float]] = {}
    for _ in range(repeats):
        for q in queries:
            ms, timings = caller.recall(space, q)
            recall_ms.append(ms)
            for key, v in timings.items():
                stage_ms.setdefault(key, []).append(v)
            t0 = time.perf_counter()
            store.read("vector_query", space=space, embedding=embeddings[q], k=k, fetch=k)
            bare_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            emb = engine.embedder.encode([q])[0].tolist()
            store.read("vector_query", space=space, embedding=emb, k=k, fetch=k)
            bare_emb_ms.append((time.perf_counter() - t0) * 1000)
            c = caller.context(space, q)
            if c is not None:
                context_ms.append(c[0])
                context_mode_ms.setdefault(str(c[1] or "unknown"), []).append(c[0])
    out: dict[str, Any] = {
        "recall": M.latency_summary(recall_ms),
        "vector_bare": M.latency_summary(bare_ms),
        "vector_bare_with_embedding": M.latency_summary(bare_emb_ms),
        "recall_stage_mean_ms": {
            k2: round(sum(v) / len(v), 2) for k2, v in sorted(stage_ms.items()) if v
        },
    }
    if context_ms:
        out["context"] = M.latency_summary(context_ms)
        out["context_modes"] = {m: len(v) for m, v in sorted(context_mode_ms.items())}
        # With calls split between flat and staged mode the overall p50 can sit between the
        # two populations and jump when a few calls change mode: report each mode too.
        out["context_by_mode"] = {
            m: M.latency_summary(v) for m, v in sorted(context_mode_ms.items())
        }
    r50, b50, e50 = (
        out["recall"]["p50_ms"],
        out["vector_bare"]["p50_ms"],
        out["vector_bare_with_embedding"]["p50_ms"],
    )
    out["ratio_recall_to_vector_p50"] = round(r50 / b50, 2) if r50 and b50 else None
    out["ratio_recall_to_vector_with_embedding_p50"] = round(r50 / e50, 2) if r50 and e50 else None
    return out


def latency_by_size(
    engine: Any, system: Any, args: argparse.Namespace, neo_pid: int | None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from benchmarks import synth

    cfg = synth.SynthConfig(seed=args.seed)
    queries = synth.queries(args.queries, seed=args.seed + 4)
    caller = _Recall(engine, args.via, args.k, args.context_window)
    reuse = getattr(args, "space", None)  # callers may build the namespace by hand
    space = reuse or f"perf-{uuid.uuid4().hex[:8]}-synth"
    rows: list[dict[str, Any]] = []
    have = 0
    created = False
    sizes = sorted(set(args.sizes))
    if reuse:
        have = system.pool_size(space)["memories"]
        sizes = [have]
        print(f"reusing {space} ({have} memories): latency only", flush=True)
    try:
        for size in sizes:
            if reuse:
                stats = None
            else:
                sessions = synth.take(size, cfg, skip=have)
                print(f"filling {space} to {size} memories (+{size - have}) …", flush=True)
                if not created:
                    stats = system.prepare(space, sessions)
                    created = True
                else:
                    stats = system.extend(space, sessions)
            have = size
            pool = system.pool_size(space)
            if stats is not None:
                print(
                    f"  {stats.turns} turns in {stats.seconds:.0f}s "
                    f"({stats.turns / stats.seconds:.0f} turns/s); measuring latency …",
                    flush=True,
                )
            lat = measure_latency(engine, caller, space, queries, args.repeats, args.warmup, args.k)
            row = {
                "memories": pool["memories"],
                "pool": pool,
                "ingest": (
                    {
                        "turns": stats.turns,
                        "seconds": round(stats.seconds, 1),
                        "turns_per_s": round(stats.turns / stats.seconds, 1),
                    }
                    if stats is not None
                    else {"turns": 0, "seconds": None, "turns_per_s": None, "reused": space}
                ),
                **lat,
                "rss_peak_mb": {
                    "api_process": machine.peak_rss_mb(os.getpid()),
                    "neo4j": machine.peak_rss_mb(neo_pid) if neo_pid else None,
                },
            }
            rows.append(row)
            r = row["recall"]
            print(
                f"  recall p50 {r['p50_ms']:.1f} ms p95 {r['p95_ms']:.1f} ms; bare vector p50 "
                f"{row['vector_bare']['p50_ms']:.1f} ms",
                flush=True,
            )
    finally:
        caller.close()
        if created and not args.keep_spaces:
            system.drop(space)
    info = {
        "recall_path": "HTTP (FastAPI app in-process via TestClient)"
        if caller.via == "http"
        else "service (Recaller.recall)" + caller.recall_note,
        "context_path": caller.context_via or f"not run: {caller.context_error}",
        "queries": queries,
        "space": space,
    }
    return rows, info


# ------------------------------------------------------------------------------- reports


def perf_markdown(result: dict[str, Any], images: list[Path], heading: bool = True) -> str:
    from benchmarks.reports import _f, _ms, _run_header, _table

    lines = [f"# Benchmark `{result['name']}` (speed)", ""] if heading else []
    lines += [*_run_header(result), ""]
    for name, ing in (result.get("ingest") or {}).items():
        if isinstance(ing, dict) and "total" in ing:
            from benchmarks.perf_ingest import ingest_markdown

            lines += ingest_markdown(name, ing)
        else:
            lines += [f"## Ingest throughput ({name})", "", f"Not run: {ing}", ""]
    rows = result.get("latency") or []
    info = result.get("latency_info") or {}
    if rows:
        lines += [
            "## Latency against corpus size (synthetic corpus, one space)",
            "",
            f"Recall path: {info.get('recall_path')}; context: {info.get('context_path')}. "
            f"{result['config'].get('queries')} queries × {result['config'].get('repeats')} "
            f"passes per size, k = {result['config'].get('k')}, touch = false, default preset. "
            "Bare vector = `db.index.vector.queryNodes` with a precomputed query embedding "
            "(`benchmarks/cypher/vector_query.cypher`); '+ emb' adds embedding the query.",
            "",
        ]
        table = []
        for r in rows:
            ctx = r.get("context") or {}
            table.append(
                [
                    str(r["memories"]),
                    f"{_ms(r['recall']['p50_ms'])} / {_ms(r['recall']['p95_ms'])}",
                    f"{_ms(r['vector_bare']['p50_ms'])} / {_ms(r['vector_bare']['p95_ms'])}",
                    f"{_ms(r['vector_bare_with_embedding']['p50_ms'])} / "
                    f"{_ms(r['vector_bare_with_embedding']['p95_ms'])}",
                    _f(r.get("ratio_recall_to_vector_p50"), 1),
                    _f(r.get("ratio_recall_to_vector_with_embedding_p50"), 1),
                    f"{_ms(ctx.get('p50_ms'))} / {_ms(ctx.get('p95_ms'))}" if ctx else "not run",
                    _f(r["ingest"]["turns_per_s"], 0),
                    _f(r["rss_peak_mb"].get("api_process"), 0),
                    _f(r["rss_peak_mb"].get("neo4j"), 0),
                ]
            )
        lines += _table(
            [
                "memories",
                "recall p50 / p95 ms",
                "bare vector p50 / p95",
                "bare + emb p50 / p95",
                "ratio p50",
                "ratio (+emb) p50",
                "context p50 / p95",
                "fill turns/s",
                "peak RSS API MB",
                "peak RSS Neo4j MB",
            ],
            table,
        )
        lines.append("")
        modes = [(r["memories"], r.get("context_modes")) for r in rows if r.get("context_modes")]
        if modes:
            lines += [
                "Context modes (calls per mode the assembler chose): "
                + "; ".join(
                    f"{n} memories: " + ", ".join(f"{k} {v}" for k, v in m.items())
                    for n, m in modes
                ),
                "",
            ]
        by_mode = [(r["memories"], r["context_by_mode"]) for r in rows if r.get("context_by_mode")]
        if by_mode:
            lines += [
                "Context latency per mode (p50 / p95 ms; the overall p50 can fall between the "
                "modes): "
                + "; ".join(
                    f"{n} memories: "
                    + ", ".join(
                        f"{k} {_ms(v['p50_ms'])} / {_ms(v['p95_ms'])}" for k, v in m.items()
                    )
                    for n, m in by_mode
                ),
                "",
            ]
        stages = rows[-1].get("recall_stage_mean_ms") or {}
        if stages:
            lines += [
                f"Recall stage timings at {rows[-1]['memories']} memories (mean ms, as the "
                "service reports them): " + ", ".join(f"{k} {v}" for k, v in stages.items()),
                "",
            ]
    if images:
        lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in images] + [""]
    return "\n".join(lines)


def write_perf_report(result: dict[str, Any], out_dir: Path) -> dict[str, Path]:
    from benchmarks import plots, reports

    out_dir.mkdir(parents=True, exist_ok=True)
    images = [
        p
        for p in [plots.latency_vs_size(result, out_dir / f"{result['name']}-latency.png")]
        if p is not None
    ]
    md = out_dir / f"{result['name']}.md"
    md.write_text(perf_markdown(result, images))
    files = {"json": reports.write_json(result, out_dir), "markdown": md}
    return {**files, **{p.stem: p for p in images}}


# ---------------------------------------------------------------------------------- main


def main(args: argparse.Namespace) -> int:
    from benchmarks import reports
    from benchmarks.instance import neo4j_for_bench, preexisting_memories, start_engine
    from benchmarks.mnemograph import MnemographSystem

    progress = not args.no_progress
    datasets: list[tuple[str, Any]] = []
    ingest: dict[str, Any] = {}
    if not args.skip_locomo:
        datasets, ingest = _ingest_datasets(args)
    started = machine.now_iso()
    load_start = machine.load_average()
    code = machine.code_version()  # the code this process loaded, before the run
    t0 = time.perf_counter()
    durations: dict[str, float] = {}
    rows: list[dict[str, Any]] = []
    info: dict[str, Any] = {}
    with neo4j_for_bench(args.neo4j_uri, keep=args.keep_neo4j) as neo:
        engine = start_engine(neo.uri, neo.auth)
        preexisting_memories(engine, neo)
        try:
            system = MnemographSystem(engine, batch_turns=args.batch_turns, progress=progress)
            for name, dataset in datasets:
                t1 = time.perf_counter()
                ingest[name] = ingest_throughput(engine, system, dataset, progress)
                durations[f"ingest_{name}"] = round(time.perf_counter() - t1, 1)
                tot = ingest[name]["total"]
                print(
                    f"{name}: ingest {tot['ingest_s']} s, bare embedder {tot['embed_s']} s on the "
                    f"same texts (ratio {tot['ratio']}); per 100 memories "
                    f"{tot['per_100_memories']}",
                    flush=True,
                )
            if not args.skip_latency:
                t1 = time.perf_counter()
                rows, info = latency_by_size(engine, system, args, neo.pid)
                durations["latency"] = round(time.perf_counter() - t1, 1)
            readiness = engine.readiness()
        finally:
            engine.close()
        neo_desc = neo.describe()
    durations["total"] = round(time.perf_counter() - t0, 1)
    result = {
        "name": args.name,
        "kind": "perf",
        "command": "python -m benchmarks " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "config": {
            "sizes": sorted(set(args.sizes)),
            "queries": args.queries,
            "repeats": args.repeats,
            "warmup": args.warmup,
            "k": args.k,
            "context_window": args.context_window,
            "via": args.via,
            "batch_turns": args.batch_turns,
            "seed": args.seed,
            "reranker_active": readiness.get("reranker_active"),
            "neo4j": {**neo_desc, "version": (readiness.get("neo4j") or {}).get("version")},
        },
        "code": code,
        "machine": machine.record(load_start),
        "started_at": started,
        "ended_at": machine.now_iso(),
        "durations_s": durations,
        "ingest": ingest if not args.skip_locomo else {"all": "skipped (--skip-locomo)"},
        "latency": rows,
        "latency_info": info,
    }
    out_dir = args.out_dir or reports.RESULTS_DIR
    files = write_perf_report(result, out_dir)
    print(json.dumps({"durations_s": durations}, indent=2))
    print("wrote " + ", ".join(str(p) for p in files.values()))
    return 0

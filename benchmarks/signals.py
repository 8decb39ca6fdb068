"""Recall variants and a per-signal diagnosis, in-process on the kept spaces of a harness run.

    python -m benchmarks.signals --dataset beam --result RUN.json --neo4j-uri bolt://... \\
        [--variant NAME=FIELD=VALUE,FIELD=VALUE ...] [--diagnose] [--out rows.json]

A run with ``--keep-spaces`` leaves one space per conversation; its result JSON names them.
Every question is asked again through the recall steps of preset ``full`` (and ``dense``) with
the default :class:`~pipelines.recall.config.RecallConfig` and each ``--variant``'s overrides
(``section.field=value``, as ``--recall-set``). Reads from Neo4j and query embeddings are
memoised, so a variant costs only the steps whose inputs it changes. Gold evidence is used
only to score, after the recall returned.

``--diagnose`` also records, per question, the rank of the first gold turn in each signal's
own ranking of the candidate pool and after each step of the preset: where the gold is found,
and which step loses it.
"""

from __future__ import annotations

import argparse
import json
import math
import threading
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np


class MemoStore:
    """``store.read`` memoised by statement and parameters (a recall is a pure function of
    the data, which a kept space does not change)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._memo: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def read(self, name: str, **params: Any) -> list[dict[str, Any]]:
        key = name + json.dumps(params, sort_keys=True, default=str)
        with self._lock:
            hit = self._memo.get(key)
        if hit is not None:
            return hit
        rows = self._store.read(name, **params)
        with self._lock:
            self._memo[key] = rows
        return rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class MemoEmbedder:
    """The engine's embedder with its query encodings memoised by text."""

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder
        self._plain: dict[tuple[str, ...], np.ndarray] = {}
        self._tokens: dict[tuple[str, ...], tuple[np.ndarray, list[Any]]] = {}

    @property
    def dimensions(self) -> int:
        return int(self._embedder.dimensions)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        key = tuple(texts)
        if key not in self._plain:
            self._plain[key] = self._embedder.encode(list(texts))
        return self._plain[key]

    def encode_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[Any]]:
        key = tuple(texts)
        if key not in self._tokens:
            self._tokens[key] = self._embedder.encode_with_tokens(list(texts))
        return self._tokens[key]


class _Engine:
    def __init__(self, engine: Any) -> None:
        self.store = MemoStore(engine.store)
        self.embedder = MemoEmbedder(engine.embedder)
        self.models = engine.models


def load_dataset(name: str, path: str | None) -> Any:
    if name == "beam":
        from benchmarks import beam

        return beam.load(path)[0]
    if name == "locomo":
        from benchmarks import locomo

        return locomo.load(path)[0]
    from benchmarks.format import load_dataset as load_generic

    return load_generic(path)


def kept_spaces(result: dict[str, Any], setting: str | None = None) -> dict[str, str]:
    """Conversation id -> space, from a kept run's result JSON (in the ``scale`` setting,
    every conversation's space is the one shared space). Without ``setting``: the run's
    per-conversation setting, or its only one."""
    settings = result.get("results", result)
    if setting is None:
        setting = "per-conversation" if len(settings) != 1 else next(iter(settings))
    run = settings[setting]
    return {conv: unit["space"] for unit in run["ingest"] for conv in unit["conversations"]}


def tagged_spaces(engine: Any, dataset: Any, tag: str) -> dict[str, str]:
    """Conversation id -> space for a run still in progress: its per-conversation spaces are
    ``bench-<tag>-c<n>`` in dataset order; those without memories yet are left out."""
    from pipelines import spaces

    out = {}
    for n, c in enumerate(dataset.conversations):
        space = f"bench-{tag}-c{n}"
        try:
            if spaces.counts(engine.store, space).get("memories", 0):
                out[c.id] = space
        except Exception:
            continue
    return out


def first_gold(order: Sequence[str], gold: frozenset[str]) -> int | None:
    """1-based rank of the first gold id in ``order`` (None: none)."""
    for n, item in enumerate(order, 1):
        if item in gold:
            return n
    return None


def recall_state(recaller: Any, space: str, request: Any, preset: Any, trace: bool) -> Any:
    """Run ``preset`` like :meth:`Recaller.recall`, keeping the state (and, with ``trace``,
    the ranking after each step under ``state.trace``)."""
    from pipelines.recall.runner import Clock
    from pipelines.recall.state import RecallState

    state = RecallState(request=request, preset=preset, profile=recaller._profile(space))
    ctx = recaller._context(space)
    clock = Clock(None)
    state.trace = {}
    for step in preset.steps:
        if not step.applies(state, ctx):
            continue
        step.run(state, ctx)
        clock.lap(step.kind)
        if trace:
            state.trace[step.kind] = list(state.final_ids() if state.results else state.order)
    state.timings = clock.total()
    return state


def signal_ranks(state: Any, config: Any, gold: frozenset[str]) -> dict[str, int | None]:
    """The rank of the first gold id in each signal's own ranking of the pool."""
    from pipelines.recall.steps.fuse import rankings

    out: dict[str, int | None] = {}
    for name, order in rankings(state.pool, state.plan, config).items():
        out[name] = first_gold(order, gold)
    return out


def ask_all(
    recaller: Any,
    dataset: Any,
    spaces: dict[str, str],
    preset: Any,
    config: Any,
    diagnose: bool,
    workers: int = 1,
    k: int = 10,
) -> list[dict[str, Any]]:
    from tqdm import tqdm

    from pipelines.recall.query import ends_with_question
    from pipelines.recall.request import RecallRequest

    questions = [
        (c, q) for c in dataset.conversations if c.id in spaces for q in c.questions if q.evidence
    ]

    session_of = {
        (c.id, turn): session
        for c in dataset.conversations
        for turn, session in c.session_of_turn().items()
    }

    def one(cq: tuple[Any, Any]) -> dict[str, Any]:
        c, q = cq
        gold = frozenset(q.evidence)
        req = RecallRequest(query=q.text, k=k, touch=False, now=q.question_time)
        state = recall_state(recaller, spaces[c.id], req, preset, diagnose)
        ids = state.final_ids()
        gold_sessions = frozenset(session_of[(c.id, e)] for e in q.evidence)
        sessions = [state.pool[i].session_id or "" for i in ids]
        row: dict[str, Any] = {
            "conversation": c.id,
            "question": q.id,
            "category": q.category,
            "intent": str(state.plan.intent),
            "rank": first_gold(ids, gold),
            "session_rank": first_gold(sessions, gold_sessions),
            "pool": len(state.pool),
            "ms": state.timings.get("total"),
        }
        if diagnose:
            row["signals"] = signal_ranks(state, config, gold)
            row["steps"] = {kind: first_gold(o, gold) for kind, o in state.trace.items()}
            row["speakers"] = list(state.plan.query_speakers)
            row["gold_asks"] = sum(
                1 for g in gold if g in state.pool and ends_with_question(state.pool[g].text)
            )
            row["gold_in_pool"] = sum(1 for g in gold if g in state.pool)
        return row

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(tqdm(pool.map(one, questions), total=len(questions), desc=preset.name))


def summarise(rows: Sequence[dict[str, Any]], k: int = 10) -> dict[str, Any]:
    def figures(items: Sequence[dict[str, Any]], key: str = "rank") -> dict[str, float]:
        n = len(items)
        hit = sum(1 for r in items if r[key] is not None and r[key] <= k)
        mrr = math.fsum(1.0 / r[key] for r in items if r[key] is not None)
        return {"n": n, "R@10": round(hit / n, 3), "MRR": round(mrr / n, 3)}

    by_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_cat[r["category"]].append(r)
    ms = sorted(r["ms"] for r in rows if r.get("ms") is not None)
    return {
        **figures(rows),
        "session": figures(rows, "session_rank"),
        "p50_ms": round(ms[len(ms) // 2], 1) if ms else None,
        "by_category": {cat: figures(items) for cat, items in sorted(by_cat.items())},
    }


def diagnosis(rows: Sequence[dict[str, Any]], k: int = 10) -> dict[str, Any]:
    """Per category: each signal's own R@10 / MRR over the pool (0 where it did not find a
    gold turn), the R@10 / MRR after each step, and how often the query named a speaker."""

    def fig(ranks: Sequence[int | None]) -> tuple[float, float]:
        n = len(ranks) or 1
        hit = sum(1 for r in ranks if r is not None and r <= k) / n
        mrr = math.fsum(1.0 / r for r in ranks if r) / n
        return round(hit, 3), round(mrr, 3)

    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["category"]].append(r)
        groups["(all)"].append(r)
    out: dict[str, Any] = {}
    for cat, items in sorted(groups.items()):
        signals = sorted({name for r in items for name in r["signals"]})
        steps = list(dict.fromkeys(kind for r in items for kind in r["steps"]))
        out[cat] = {
            "n": len(items),
            "signals": {s: fig([r["signals"].get(s) for r in items]) for s in signals},
            "steps": {s: fig([r["steps"].get(s) for r in items]) for s in steps},
            "named_speaker": sum(1 for r in items if r["speakers"]),
            "gold_asks": sum(1 for r in items if r["gold_asks"]),
            "gold_in_pool": sum(1 for r in items if r["gold_in_pool"]),
        }
    return out


def parse_variant(text: str) -> tuple[str, str, list[str]]:
    """``NAME=PRESET:FIELD=VALUE,FIELD=VALUE`` (PRESET and the overrides optional)."""
    name, _, rest = text.partition("=")
    preset, _, pairs = rest.partition(":")
    return name, preset or "full", [p for p in pairs.split(",") if p]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.signals", description=__doc__)
    p.add_argument("--dataset", choices=["beam", "locomo", "generic"], required=True)
    p.add_argument("--path", default=None)
    p.add_argument("--result", type=Path, default=None, help="result JSON of a kept run")
    p.add_argument("--tag", default=None, help="or: the run's space tag (bench-TAG-cN)")
    p.add_argument("--conversations", type=int, default=None, help="the first N only")
    p.add_argument("--neo4j-uri", required=True)
    p.add_argument("--variant", action="append", default=[], help="NAME=PRESET:F=V,F=V")
    p.add_argument("--diagnose", action="store_true")
    p.add_argument("--workers", type=int, default=2, help="questions in flight at once")
    p.add_argument("--out", type=Path, default=None, help="per-question rows (JSON)")
    args = p.parse_args(argv)

    from benchmarks.instance import start_engine
    from benchmarks.mnemograph import recall_overrides
    from benchmarks.presets import BENCH_PRESETS
    from pipelines.recall.config import DEFAULT_RECALL_CONFIG
    from pipelines.recall.service import Recaller

    dataset = load_dataset(args.dataset, args.path)
    engine = start_engine(args.neo4j_uri)
    if args.result is not None:
        spaces = kept_spaces(json.loads(args.result.read_text()))
    else:
        spaces = tagged_spaces(engine, dataset, args.tag)
    if args.conversations is not None:
        first = [c.id for c in dataset.conversations[: args.conversations]]
        spaces = {c: spaces[c] for c in first if c in spaces}
    print(f"{len(spaces)} spaces: {', '.join(sorted(spaces.values()))}", flush=True)
    memo = _Engine(engine)
    variants = [parse_variant(v) for v in args.variant] or [("full", "full", [])]
    out: dict[str, Any] = {}
    try:
        for name, preset_name, pairs in variants:
            config = recall_overrides(pairs) or DEFAULT_RECALL_CONFIG
            recaller = Recaller(memo, config)  # type: ignore[arg-type]
            recaller.embedder = memo.embedder
            rows = ask_all(
                recaller,
                dataset,
                spaces,
                BENCH_PRESETS[preset_name],
                config,
                args.diagnose,
                args.workers,
            )
            summary = summarise(rows)
            out[name] = {"summary": summary, "rows": rows}
            if args.diagnose:
                out[name]["diagnosis"] = diagnosis(rows)
            cats = "  ".join(
                f"{c} {v['R@10']:.3f}/{v['MRR']:.3f}" for c, v in summary["by_category"].items()
            )
            print(
                f"{name:16s} R@10 {summary['R@10']:.3f} MRR {summary['MRR']:.3f} session "
                f"{summary['session']['R@10']:.3f} / {summary['session']['MRR']:.3f} "
                f"p50 {summary['p50_ms']} ms | {cats}",
                flush=True,
            )
    finally:
        engine.close()
    if args.out:
        args.out.write_text(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The benchmark runner: ingest, ask, and only then score.

Two phases, kept apart on purpose (the oracle-leak guard, see :mod:`benchmarks.sut`):

1. :func:`collect` drives the system under test. Per *unit* (one space) it ingests the corpus
   (sessions and turns only), then sends every question as a :class:`~benchmarks.sut.QueryInput`
   (text + question time) to every recall configuration, and, for the context benchmark, the
   flat-recall baseline and the assembler. It records raw outputs (:class:`Outcome`), keyed by
   conversation and question id; it never reads a question's evidence, category, answer or
   ``unanswerable`` flag.
2. :func:`score` joins the raw outputs with the dataset's gold labels and computes the metrics.

Settings:

* ``per-conversation`` — each conversation in a fresh space; sessions carry the dataset's stage
  labels (LoCoMo has none, so the write path's time-gap stages apply).
* ``scale`` — every conversation in ONE space; session and turn ids are prefixed with
  ``<conversation id>:`` so they stay unique, each session is its own explicit stage, sessions
  are ingested in time order; each question is asked against that one space.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from benchmarks import metrics as M
from benchmarks.context_bench import ContextBenchUnavailable, FlatRecallContext
from benchmarks.format import Conversation, Dataset
from benchmarks.sut import (
    ContextSpan,
    ContextSystem,
    CorpusSession,
    IngestStats,
    RecallSystem,
    context_input,
    corpus_sessions,
    query_input,
)

SETTINGS: tuple[str, ...] = ("per-conversation", "scale")
DEFAULT_BUDGETS: tuple[int, ...] = (1000, 2000, 4000)


@dataclass
class RunOptions:
    configs: Sequence[str]
    settings: Sequence[str] = SETTINGS
    ks: Sequence[int] = M.DEFAULT_KS
    budgets: Sequence[int] = DEFAULT_BUDGETS
    context: bool = True
    """Run the context benchmark (flat baseline, and the assembler when available)."""
    context_preset: str = "full"
    """Recall preset whose results the flat baseline packs."""
    flat_k: int = 100
    """How many recall results the flat baseline fetches before packing."""
    keep_spaces: bool = False
    stage_labels: bool = True
    """Pass the dataset's own session stage labels in the per-conversation setting."""
    progress: bool = True
    space_prefix: str = "bench"
    workers: int = 1
    """Questions in flight at once (threads). Above 1, per-call latencies include contention:
    quality figures are unaffected, speed figures come from the perf benchmark."""


@dataclass
class ContextPlan:
    """A context system to run, at which budgets (None: the run's budgets) and in which
    settings (None: every setting)."""

    system: ContextSystem
    budgets: Sequence[int] | None = None
    settings: Sequence[str] | None = None

    def applies(self, setting: str) -> bool:
        return self.settings is None or setting in self.settings


@dataclass(frozen=True)
class Outcome:
    """The raw answer of the system to one question under one configuration."""

    conversation: str
    question: str
    config: str
    ids: tuple[str, ...]
    sessions: tuple[str | None, ...]
    abstain: bool
    latency_ms: float
    candidates: int | None = None
    intent: str | None = None
    steps_ms: tuple[tuple[str, float], ...] = ()
    """The read path's own per-step timings (``timings_ms`` of the response), in step order."""


@dataclass(frozen=True)
class ContextOutcome:
    conversation: str
    question: str
    system: str
    budget: int
    ids: tuple[str, ...]
    used_tokens: int
    latency_ms: float
    mode: str | None = None
    spans: tuple[ContextSpan, ...] = ()
    """The context's text by section and memory (context precision)."""


@dataclass
class UnitRun:
    """One space: which conversations it holds, with which id prefix, and what it cost."""

    space: str
    conversations: list[tuple[str, str]]  # (conversation id, id prefix)
    ingest: IngestStats | None = None
    pool: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    load: dict[str, float] = field(default_factory=dict)
    """The machine's 1-minute load average when each phase began (a slow unit on a busy
    machine is told apart from a slow unit on an idle one)."""


@dataclass
class SettingRun:
    setting: str
    units: list[UnitRun] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    context: list[ContextOutcome] = field(default_factory=list)
    context_status: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


# ------------------------------------------------------------------------------------- collect


def _units(dataset: Dataset, setting: str) -> list[tuple[list[Conversation], bool]]:
    """(conversations, prefixed?) per space."""
    if setting == "per-conversation":
        return [([c], False) for c in dataset.conversations]
    if setting == "scale":
        return [(list(dataset.conversations), True)]
    raise ValueError(f"unknown setting {setting!r} (known: {', '.join(SETTINGS)})")


def _unit_sessions(
    convs: Sequence[Conversation], prefixed: bool, stage_labels: bool
) -> list[CorpusSession]:
    out: list[CorpusSession] = []
    for c in convs:
        out.extend(
            corpus_sessions(
                c.sessions,
                prefix=f"{c.id}:" if prefixed else "",
                stage_from_session=prefixed,
                keep_stage_labels=stage_labels,
            )
        )
    if prefixed:
        floor = datetime.min.replace(tzinfo=UTC)
        order = {s.id: i for i, s in enumerate(out)}
        out.sort(key=lambda s: (s.started_at or floor, order[s.id]))
    return out


def _map(fn, items: Sequence, options: RunOptions, desc: str) -> list:
    """``[fn(x) for x in items]`` in order, on ``options.workers`` threads, with a progress
    bar."""
    bar = None
    if options.progress:
        from tqdm import tqdm

        bar = tqdm(total=len(items), desc=desc, unit="q", leave=False)
    try:
        if options.workers <= 1:
            out = []
            for x in items:
                out.append(fn(x))
                if bar is not None:
                    bar.update(1)
            return out
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=options.workers) as pool:
            out = []
            for y in pool.map(fn, items):
                out.append(y)
                if bar is not None:
                    bar.update(1)
            return out
    finally:
        if bar is not None:
            bar.close()


def collect(
    system: RecallSystem,
    dataset: Dataset,
    setting: str,
    options: RunOptions,
    contexts: Sequence[ContextPlan] = (),
    context_error: str | None = None,
) -> SettingRun:
    """Phase 1: drive the system. Reads only corpus fields and question text/time/id."""
    plans = [p for p in contexts if p.applies(setting)]
    run = SettingRun(setting=setting)
    t_setting = time.perf_counter()
    tag = uuid.uuid4().hex[:8]
    flat = FlatRecallContext(system, preset=options.context_preset, recall_k=options.flat_k)
    if options.context:
        run.context_status["flat"] = "run"
        for p in plans:
            run.context_status[p.system.name] = "run"
        if context_error:
            run.context_status["assembler"] = f"not run: {context_error}"
    for ui, (convs, prefixed) in enumerate(_units(dataset, setting)):
        suffix = "scale" if prefixed else f"c{ui}"
        space = f"{options.space_prefix}-{tag}-{suffix}"
        unit = UnitRun(
            space=space,
            conversations=[(c.id, f"{c.id}:" if prefixed else "") for c in convs],
        )
        run.units.append(unit)
        sessions = _unit_sessions(convs, prefixed, options.stage_labels)
        label = "scale" if prefixed else convs[0].id
        try:
            unit.load["ingest"] = _load_average()
            t0 = time.perf_counter()
            unit.ingest = system.prepare(space, sessions)
            unit.seconds["ingest"] = time.perf_counter() - t0
            unit.pool = dict(system.pool_size(space))
            questions = [(c, q) for c in convs for q in c.questions]
            unit.load["recall"] = _load_average()
            t0 = time.perf_counter()
            for config in options.configs:

                def ask(cq, config=config, space=space):
                    c, q = cq
                    r = system.recall(space, query_input(q), config, max(options.ks))
                    return Outcome(
                        conversation=c.id,
                        question=q.id,
                        config=config,
                        ids=tuple(h.id for h in r.hits),
                        sessions=tuple(h.session_id for h in r.hits),
                        abstain=r.abstain,
                        latency_ms=r.latency_ms,
                        candidates=r.candidates,
                        intent=r.intent,
                        steps_ms=tuple(
                            (k, v) for k, v in (r.timings_ms or {}).items() if k != "total"
                        ),
                    )

                run.outcomes.extend(_map(ask, questions, options, f"{setting} {label} {config}"))
            unit.seconds["recall"] = time.perf_counter() - t0
            if options.context:

                def contextualise(cq, space=space):
                    c, q = cq
                    out = []
                    fetched = flat.fetch(space, query_input(q))
                    for budget, ctx in flat.pack(fetched, options.budgets).items():
                        out.append(
                            ContextOutcome(
                                c.id,
                                q.id,
                                "flat",
                                budget,
                                tuple(ctx.memory_ids),
                                ctx.used_tokens,
                                ctx.latency_ms,
                                spans=ctx.spans,
                            )
                        )
                    for plan in plans:
                        for budget in plan.budgets or options.budgets:
                            ctx = plan.system.assemble(space, context_input(q, budget))
                            out.append(
                                ContextOutcome(
                                    c.id,
                                    q.id,
                                    plan.system.name,
                                    budget,
                                    tuple(ctx.memory_ids),
                                    ctx.used_tokens,
                                    ctx.latency_ms,
                                    ctx.report.get("mode"),
                                    ctx.spans,
                                )
                            )
                    return out

                t0 = time.perf_counter()
                for outs in _map(contextualise, questions, options, f"{setting} {label} context"):
                    run.context.extend(outs)
                unit.seconds["context"] = time.perf_counter() - t0
        finally:
            if not options.keep_spaces:
                system.drop(space)
    run.seconds = time.perf_counter() - t_setting
    return run


# --------------------------------------------------------------------------------------- score


@dataclass(frozen=True)
class Gold:
    category: str
    unanswerable: bool
    turns: frozenset[str]
    sessions: frozenset[str]


def gold_index(dataset: Dataset, run: SettingRun) -> dict[tuple[str, str], Gold]:
    """(conversation id, question id) → gold labels in the id space of the run's units."""
    prefix = {cid: p for u in run.units for cid, p in u.conversations}
    out: dict[tuple[str, str], Gold] = {}
    for c in dataset.conversations:
        if c.id not in prefix:
            continue
        p = prefix[c.id]
        session_of = c.session_of_turn()
        for q in c.questions:
            out[(c.id, q.id)] = Gold(
                category=q.category,
                unanswerable=q.unanswerable,
                turns=frozenset(p + e for e in q.evidence),
                sessions=frozenset(p + session_of[e] for e in q.evidence),
            )
    return out


def session_index(dataset: Dataset, run: SettingRun) -> dict[str, str]:
    """Every turn of the run's conversations -> its session, in the id space of its unit."""
    prefix = {cid: p for u in run.units for cid, p in u.conversations}
    return {
        prefix[c.id] + t: prefix[c.id] + s
        for c in dataset.conversations
        if c.id in prefix
        for t, s in c.session_of_turn().items()
    }


def _pool_summary(units: Sequence[UnitRun]) -> dict[str, Any]:
    out: dict[str, Any] = {"spaces": len(units)}
    for key in ("memories", "sessions", "stages", "entities"):
        vals = [u.pool.get(key, 0) for u in units]
        if vals:
            out[key] = {
                "mean": round(sum(vals) / len(vals), 1),
                "min": min(vals),
                "max": max(vals),
                "total": sum(vals),
            }
    return out


def score(dataset: Dataset, run: SettingRun, options: RunOptions) -> dict[str, Any]:
    """Phase 2: metrics of one setting from the raw outcomes and the dataset's gold labels."""
    gold = gold_index(dataset, run)
    pool = _pool_summary(run.units)
    no_evidence = sum(1 for g in gold.values() if not g.turns)
    configs: dict[str, Any] = {}
    by_config: dict[str, list[Outcome]] = defaultdict(list)
    for o in run.outcomes:
        by_config[o.config].append(o)
    for config in options.configs:
        outs = by_config.get(config, [])
        turn_items, session_items, answerable_t, answerable_s = [], [], [], []
        turn_by_intent, session_by_intent = [], []
        abst = []
        for o in outs:
            g = gold[(o.conversation, o.question)]
            abst.append((g.unanswerable, o.abstain))
            if not g.turns:
                continue
            jt = M.Judged(g.category, o.ids, g.turns)
            js = M.Judged(g.category, o.sessions, g.sessions)
            turn_items.append(jt)
            session_items.append(js)
            # the system's own intent label (never gold data): a per-intent view of the same
            intent = o.intent or "(none)"
            turn_by_intent.append(M.Judged(intent, o.ids, g.turns))
            session_by_intent.append(M.Judged(intent, o.sessions, g.sessions))
            if not g.unanswerable:
                answerable_t.append(jt)
                answerable_s.append(js)
        cands = [o.candidates for o in outs if o.candidates is not None]
        configs[config] = {
            "pool": pool,
            "questions": len(outs),
            "turn": {
                **M.retrieval_metrics(turn_items, options.ks),
                "answerable": M.retrieval_metrics(answerable_t, options.ks),
                "by_category": M.by_category(turn_items, options.ks),
                "by_intent": M.by_category(turn_by_intent, options.ks),
            },
            "session": {
                **M.retrieval_metrics(session_items, options.ks),
                "answerable": M.retrieval_metrics(answerable_s, options.ks),
                "by_category": M.by_category(session_items, options.ks),
                "by_intent": M.by_category(session_by_intent, options.ks),
            },
            "abstention": M.abstention_metrics(abst),
            "latency": M.latency_summary([o.latency_ms for o in outs]),
            "latency_by_conversation": _p50_by(outs, lambda o: o.conversation),
            "steps_p50_ms": _steps_p50(outs),
            "candidates_mean": round(sum(cands) / len(cands), 1) if cands else None,
        }
    context: dict[str, Any] = {}
    groups: dict[tuple[str, int], list[ContextOutcome]] = defaultdict(list)
    for co in run.context:
        groups[(co.system, co.budget)].append(co)
    session_of = session_index(dataset, run) if run.context else {}
    for (system, budget), cos in sorted(groups.items()):
        pairs = []
        precise = []
        by_cat: dict[str, list] = defaultdict(list)
        for co in cos:
            g = gold[(co.conversation, co.question)]
            if not g.turns:
                continue
            pairs.append((g.turns, co.ids))
            by_cat[g.category].append((g.turns, co.ids))
            if co.spans:
                precise.append(M.Precise(co.spans, g.turns, g.sessions, session_of))
        context.setdefault(system, {})[str(budget)] = {
            **M.context_recall(pairs),
            "precision": M.context_precision(precise),
            "by_category": {c: M.context_recall(v) for c, v in sorted(by_cat.items())},
            "used_tokens_mean": round(sum(c.used_tokens for c in cos) / len(cos), 1),
            "memories_mean": round(sum(len(c.ids) for c in cos) / len(cos), 1),
            "latency": M.latency_summary([c.latency_ms for c in cos]),
            "modes": dict(Counter(c.mode for c in cos if c.mode)),
            "pool": pool,
        }
    return {
        "setting": run.setting,
        "questions": len(gold),
        "questions_without_evidence": no_evidence,
        "pool": pool,
        "ingest": [
            {
                "space": u.space,
                "conversations": [cid for cid, _ in u.conversations],
                "turns": u.ingest.turns if u.ingest else None,
                "seconds": round(u.ingest.seconds, 2) if u.ingest else None,
                "turns_per_s": round(u.ingest.turns / u.ingest.seconds, 1)
                if u.ingest and u.ingest.seconds
                else None,
                "pool": u.pool,
                "phase_seconds": {k: round(v, 2) for k, v in u.seconds.items()},
                "load_average": {k: round(v, 2) for k, v in u.load.items()},
            }
            for u in run.units
        ],
        "configs": configs,
        "context": context,
        "context_status": run.context_status,
        "seconds": round(run.seconds, 1),
    }


def _load_average() -> float:
    return os.getloadavg()[0]


def _p50_by(outs: Sequence[Outcome], key: Any) -> dict[str, float | None]:
    """Median latency per group (a conversation): one slow unit shows in its own row."""
    groups: dict[str, list[float]] = defaultdict(list)
    for o in outs:
        groups[key(o)].append(o.latency_ms)
    return {g: _r2(M.percentile(v, 50)) for g, v in groups.items()}


def _steps_p50(outs: Sequence[Outcome]) -> dict[str, float | None]:
    """Median milliseconds of each read-path step over the questions that ran it."""
    steps: dict[str, list[float]] = defaultdict(list)
    for o in outs:
        for step, ms in o.steps_ms:
            steps[step].append(ms)
    return {step: _r2(M.percentile(v, 50)) for step, v in steps.items()}


def _r2(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def summary_keys(result: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """``{setting: {config: {turn.R@10, turn.MRR, session.R@10, session.MRR}}}``."""
    out: dict[str, dict[str, float | None]] = {}
    for setting, sres in result.items():
        for config, c in sres["configs"].items():
            out.setdefault(setting, {})[config] = {
                "turn.R@10": c["turn"].get("R@10"),
                "turn.MRR": c["turn"].get("MRR"),
                "session.R@10": c["session"].get("R@10"),
                "session.MRR": c["session"].get("MRR"),
            }
    return out


def run_benchmark(
    system: RecallSystem,
    dataset: Dataset,
    options: RunOptions,
    contexts: Sequence[ContextPlan] = (),
    context_error: str | None = None,
) -> dict[str, Any]:
    """Collect then score every requested setting; returns ``{setting: metrics}``."""
    results: dict[str, Any] = {}
    for setting in options.settings:
        run = collect(system, dataset, setting, options, contexts, context_error)
        results[setting] = score(dataset, run, options)
    return results


__all__ = [
    "DEFAULT_BUDGETS",
    "SETTINGS",
    "ContextBenchUnavailable",
    "ContextOutcome",
    "ContextPlan",
    "Outcome",
    "RunOptions",
    "SettingRun",
    "collect",
    "run_benchmark",
    "score",
    "summary_keys",
]

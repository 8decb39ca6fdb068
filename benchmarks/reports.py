"""Result files: ``benchmarks/results/<name>.json``, ``<name>.md`` and ``<name>-*.png``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import plots
from benchmarks.mnemograph import PRESET_LABELS

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def _f(x: Any, digits: int = 3) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _ms(x: Any) -> str:
    return "–" if x is None else f"{x:.1f}"


def _pool(pool: dict[str, Any]) -> str:
    mem = pool.get("memories") or {}
    ses = pool.get("sessions") or {}
    if not mem:
        return "–"
    if pool.get("spaces", 1) == 1:
        return f"{mem.get('total')} mem / {ses.get('total')} sess"
    return (
        f"{mem.get('mean'):.0f} mem ({mem.get('min')}–{mem.get('max')}) / "
        f"{ses.get('mean'):.0f} sess ({ses.get('min')}–{ses.get('max')})"
    )


def _latency_tables(configs: dict[str, Any], units: list[dict[str, Any]]) -> list[str]:
    """Where the time goes: each configuration's median per read-path step, and its median per
    conversation beside the load average when that unit's questions began."""
    lines: list[str] = []
    steps = {c: v["steps_p50_ms"] for c, v in configs.items() if v.get("steps_p50_ms")}
    if steps:
        names = list(dict.fromkeys(s for by_step in steps.values() for s in by_step))
        rows = [
            [PRESET_LABELS.get(c, c), *(_ms(by_step.get(n)) for n in names)]
            for c, by_step in steps.items()
        ]
        lines += ["Median ms per read-path step:", "", *_table(["config", *names], rows), ""]
    per_conv = {
        c: v["latency_by_conversation"]
        for c, v in configs.items()
        if v.get("latency_by_conversation")
    }
    if per_conv and len(units) > 1:
        load = {
            cid: (u.get("load_average") or {}).get("recall")
            for u in units
            for cid in u["conversations"]
        }
        convs = list(dict.fromkeys(cid for by_conv in per_conv.values() for cid in by_conv))
        rows = [
            [cid, _f(load.get(cid), 1), *(_ms(per_conv[c].get(cid)) for c in per_conv)]
            for cid in convs
        ]
        header = ["conversation", "load", *(PRESET_LABELS.get(c, c) for c in per_conv)]
        lines += ["Median ms per conversation:", "", *_table(header, rows), ""]
    return lines


def _intent_table(configs: dict[str, Any]) -> list[str]:
    """Per intent the system classified (its own label, not gold data): a table of every
    configuration that reports intents (the reference baselines do not)."""
    rows = []
    for config, c in configs.items():
        by_turn = c["turn"].get("by_intent") or {}
        by_session = c["session"].get("by_intent") or {}
        if not by_turn or set(by_turn) == {"(none)"}:
            continue
        for intent in sorted(by_turn, key=lambda i: -by_turn[i]["n"]):
            t, s = by_turn[intent], by_session.get(intent, {})
            rows.append(
                [
                    PRESET_LABELS.get(config, config),
                    intent,
                    str(t["n"]),
                    _f(t.get("R@10")),
                    _f(t.get("MRR")),
                    _f(s.get("R@10")),
                    _f(s.get("MRR")),
                ]
            )
    if not rows:
        return []
    header = ["config", "intent", "n", "turn R@10", "turn MRR", "sess R@10", "sess MRR"]
    return [
        "Per intent (the intent the system classified the question as; n):",
        "",
        *_table(header, rows),
        "",
    ]


def _precision_table(context: dict[str, Any]) -> list[str]:
    """Context precision per system and budget (results recorded before it have none)."""
    rows = []
    for system, by_budget in context.items():
        for budget, cr in sorted(by_budget.items(), key=lambda kv: int(kv[0])):
            p = cr.get("precision")
            if not p or not p.get("n"):
                continue
            f = p.get("facts") or {}
            rows.append(
                [
                    system,
                    budget,
                    str(p["n"]),
                    _f(p.get("turn")),
                    _f(p.get("session")),
                    _f(f.get("share")),
                    f"{_f(f.get('turn'))} / {_f(f.get('session'))} ({f.get('n', 0)})",
                    _f(p.get("unattributed")),
                ]
            )
    if not rows:
        return []
    header = [
        "system",
        "budget",
        "n",
        "gold turns",
        "gold sessions",
        "facts share",
        "facts: gold turns / sessions (n)",
        "unattributed",
    ]
    return [
        "Context precision (share of the context's characters, so of its chars/3 tokens, in "
        "records of gold evidence turns / of turns from their sessions, mean per question; "
        "framing, headers and stage summaries count as not gold; facts: the Facts section "
        "alone, over the contexts that have one, and its share of the whole context):",
        "",
        *_table(header, rows),
        "",
    ]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def write_json(result: dict[str, Any], out_dir: Path = RESULTS_DIR) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{result['name']}.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=False, default=str) + "\n")
    return path


def recall_plots(result: dict[str, Any], out_dir: Path = RESULTS_DIR) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    name = result["name"]
    made = [
        plots.metric_by_config(result, out_dir / f"{name}-by-config.png"),
        plots.metric_by_category(result, out_dir / f"{name}-by-category.png"),
        plots.context_by_budget(result, out_dir / f"{name}-context.png"),
    ]
    return [p for p in made if p is not None]


def _run_header(result: dict[str, Any]) -> list[str]:
    m = result.get("machine", {})
    code = result.get("code", {})
    dirty = " (uncommitted changes)" if code.get("dirty") else ""
    note = f" — {code['note']}" if code.get("note") else ""
    return [
        f"- command: `{result.get('command', '')}`",
        f"- code: `{code.get('commit', 'unknown')}`{dirty}{note}",
        f"- machine: {m.get('cores')} cores, {m.get('ram_gb')} GB RAM, {m.get('cpu')}, "
        f"Python {m.get('python')}; load average (1/5/15 min) at start "
        f"{m.get('load_average_start')}, at end {m.get('load_average_end')} (shared machine)",
        f"- started {result.get('started_at')}, ended {result.get('ended_at')}, "
        f"total {result.get('durations_s', {}).get('total', '?')} s",
    ]


def recall_markdown(result: dict[str, Any], images: Sequence[Path] = ()) -> str:
    ds = result.get("dataset", {})
    lines = [
        f"# Benchmark `{result['name']}`",
        "",
        *_run_header(result),
        f"- dataset: {ds.get('name')} — {ds.get('conversations')} conversations, "
        f"{ds.get('sessions')} sessions, {ds.get('turns')} turns, {ds.get('questions')} questions",
        "",
        "Turn level: a hit is a retrieved memory that is a gold evidence turn. Session level: a "
        "hit is a retrieved memory from a session that holds a gold evidence turn. R@k is binary "
        "(any gold in the top k), MRR uses the first gold hit among the returned k=10, FR@10 is "
        "the fraction of gold found in the top 10 over multi-evidence questions. Pool = memories "
        "(and sessions) in the space each question was asked against.",
        "",
    ]
    conv = (ds.get("meta") or {}).get("conversion")
    if conv:
        lines += [
            f"Evidence normalisation: {conv.get('evidence_split')} entries split, "
            f"{conv.get('evidence_normalised')} reformatted, "
            f"{conv.get('evidence_unresolved_count')} ids unresolved (dropped): "
            + ", ".join(f"`{u['entry']}` ({u['question']})" for u in conv["evidence_unresolved"])
            + ".",
            "",
        ]
    for setting, sres in (result.get("results") or {}).items():
        lines += [
            f"## Setting: {setting}",
            "",
            f"{sres['questions']} questions, {sres['questions_without_evidence']} without "
            f"evidence (excluded from retrieval metrics). Pool: {_pool(sres['pool'])}. "
            f"Setting time {sres.get('seconds')} s.",
            "",
        ]
        rows = []
        for config, c in sres["configs"].items():
            t, s, a, lat = c["turn"], c["session"], c["abstention"], c["latency"]
            rows.append(
                [
                    PRESET_LABELS.get(config, config),
                    str(t["n"]),
                    _f(t.get("R@1")),
                    _f(t.get("R@5")),
                    _f(t.get("R@10")),
                    _f(t.get("MRR")),
                    _f(t.get("FR@10")),
                    _f(s.get("R@1")),
                    _f(s.get("R@5")),
                    _f(s.get("R@10")),
                    _f(s.get("MRR")),
                    f"{_f(a.get('precision'), 2)} / {_f(a.get('recall'), 2)} / "
                    f"{_f(a.get('f1'), 2)}",
                    f"{_ms(lat.get('p50_ms'))} / {_ms(lat.get('p95_ms'))}",
                    _pool(c["pool"]),
                ]
            )
        header = [
            "config",
            "n",
            "turn R@1",
            "turn R@5",
            "turn R@10",
            "turn MRR",
            "turn FR@10",
            "sess R@1",
            "sess R@5",
            "sess R@10",
            "sess MRR",
            "abstain P / R / F1",
            "latency p50 / p95 ms",
            "pool",
        ]
        lines += _table(header, rows) if rows else ["(no recall configurations in this run)"]
        lines.append("")
        cats = sorted({k for c in sres["configs"].values() for k in c["turn"]["by_category"]})
        if cats:
            lines += ["Per category (turn R@10 / turn MRR / session R@10; n):", ""]
            rows = []
            for config, c in sres["configs"].items():
                row = [PRESET_LABELS.get(config, config)]
                for cat in cats:
                    t = c["turn"]["by_category"].get(cat, {})
                    s = c["session"]["by_category"].get(cat, {})
                    row.append(
                        f"{_f(t.get('R@10'), 2)} / {_f(t.get('MRR'), 2)} / "
                        f"{_f(s.get('R@10'), 2)} ({t.get('n', 0)})"
                    )
                rows.append(row)
            lines += _table(["config", *cats], rows)
            lines.append("")
        lines += _intent_table(sres["configs"])
        lines += _latency_tables(sres["configs"], sres.get("ingest") or [])
        status = sres.get("context_status") or {}
        if status:
            lines += [
                "Context recall (share of questions with a gold evidence turn in the context; "
                "`all` = every gold turn; tokens by chars/3):",
                "",
            ]
            rows = []
            for system, by_budget in (sres.get("context") or {}).items():
                for budget, cr in sorted(by_budget.items(), key=lambda kv: int(kv[0])):
                    rows.append(
                        [
                            system,
                            budget,
                            _f(cr.get("any")),
                            _f(cr.get("all")),
                            _f(cr.get("frac")),
                            _f(cr.get("memories_mean"), 1),
                            _f(cr.get("used_tokens_mean"), 0),
                            _ms(cr["latency"].get("p50_ms")),
                            ", ".join(f"{k} {v}" for k, v in (cr.get("modes") or {}).items())
                            or "–",
                            _pool(cr["pool"]),
                        ]
                    )
            lines += _table(
                [
                    "system",
                    "budget",
                    "any",
                    "all",
                    "fraction",
                    "memories",
                    "tokens used",
                    "p50 ms",
                    "modes",
                    "pool",
                ],
                rows,
            )
            for system, st in status.items():
                if st != "run":
                    lines.append(f"\n*{system}*: {st}")
            lines.append("")
            lines += _precision_table(sres.get("context") or {})
            ctx_cats = sorted(
                {
                    cat
                    for by_budget in (sres.get("context") or {}).values()
                    for cr in by_budget.values()
                    for cat in cr.get("by_category", {})
                }
            )
            if ctx_cats:
                lines += ["Context recall per category (`any`; n):", ""]
                rows = []
                for system, by_budget in (sres.get("context") or {}).items():
                    for budget, cr in sorted(by_budget.items(), key=lambda kv: int(kv[0])):
                        row = [system, budget]
                        for cat in ctx_cats:
                            cc = cr.get("by_category", {}).get(cat, {})
                            row.append(f"{_f(cc.get('any'))} ({cc.get('n', 0)})")
                        rows.append(row)
                lines += _table(["system", "budget", *ctx_cats], rows)
                lines.append("")
    if images:
        lines += ["## Plots", ""]
        lines += [f"![{p.stem}]({p.name})" for p in images]
        lines.append("")
    return "\n".join(lines)


def write_recall_report(result: dict[str, Any], out_dir: Path = RESULTS_DIR) -> dict[str, Path]:
    images = recall_plots(result, out_dir)
    md = out_dir / f"{result['name']}.md"
    md.write_text(recall_markdown(result, images))
    return {"json": write_json(result, out_dir), "markdown": md, **{p.stem: p for p in images}}


def figures_markdown(result: dict[str, Any], image_prefix: str = "benchmarks/results/") -> str:
    """Compact tables of a recall result for BENCHMARKS.md (``python -m benchmarks figures``)."""
    code = result.get("code", {})
    m = result.get("machine", {})
    lines = [
        f"**`{result['name']}`** — `{result.get('command', '')}`; code `"
        f"{str(code.get('commit', 'unknown'))[:12]}`"
        + (" + uncommitted changes" if code.get("dirty") else "")
        + f"; {result.get('started_at')} → {result.get('ended_at')} "
        f"({result.get('durations_s', {}).get('total', '?')} s); {m.get('cores')} cores, "
        f"load average {m.get('load_average_start')} → {m.get('load_average_end')}.",
        "",
    ]
    for setting, sres in (result.get("results") or {}).items():
        if sres["configs"]:
            lines += [
                f"*{setting}* — {sres['questions'] - sres['questions_without_evidence']} "
                f"questions with evidence; pool {_pool(sres['pool'])}",
                "",
            ]
            rows = []
            for config, c in sres["configs"].items():
                t, s, a = c["turn"], c["session"], c["abstention"]
                rows.append(
                    [
                        PRESET_LABELS.get(config, config),
                        _f(t.get("R@1")),
                        _f(t.get("R@5")),
                        _f(t.get("R@10")),
                        _f(t.get("MRR")),
                        _f(t.get("FR@10")),
                        _f(s.get("R@10")),
                        _f(s.get("MRR")),
                        f"{_f(a.get('precision'), 2)} / {_f(a.get('recall'), 2)}",
                        _ms(c["latency"].get("p50_ms")),
                    ]
                )
            lines += _table(
                [
                    "config",
                    "turn R@1",
                    "turn R@5",
                    "turn R@10",
                    "turn MRR",
                    "turn FR@10 (multi)",
                    "session R@10",
                    "session MRR",
                    "abstain P / R",
                    "p50 ms",
                ],
                rows,
            )
            lines.append("")
        ctx = sres.get("context") or {}
        if ctx:
            budgets = sorted({int(b) for by in ctx.values() for b in by})
            lines += [
                f"*{setting}* — context recall (`any` / `all` gold turns in the context) by "
                f"token budget; pool {_pool(sres['pool'])}",
                "",
            ]
            rows = []
            for system, by_budget in ctx.items():
                row = [system]
                for b in budgets:
                    cr = by_budget.get(str(b))
                    row.append(f"{_f(cr['any'])} / {_f(cr['all'])}" if cr else "–")
                rows.append(row)
            lines += _table(["system", *[str(b) for b in budgets]], rows)
            lines.append("")
            rows = []
            for system, by_budget in ctx.items():
                row = [system]
                for b in budgets:
                    p = (by_budget.get(str(b)) or {}).get("precision") or {}
                    f = p.get("facts") or {}
                    row.append(
                        f"{_f(p.get('turn'))} / {_f(p.get('session'))} / {_f(f.get('turn'))}"
                        if p.get("n")
                        else "–"
                    )
                rows.append(row)
            if any(cell != "–" for row in rows for cell in row[1:]):
                lines += [
                    f"*{setting}* — context precision (share of the context's tokens from gold "
                    "turns / from their sessions / of the Facts section's tokens from gold turns)",
                    "",
                    *_table(["system", *[str(b) for b in budgets]], rows),
                    "",
                ]
    name = result["name"]
    for suffix in ("by-config", "by-category", "context"):
        lines.append(f"![{name}-{suffix}]({image_prefix}{name}-{suffix}.png)")
    lines.append("")
    return "\n".join(lines)

"""PNG plots with matplotlib (Agg backend, no display needed). Each function returns the path."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from benchmarks.mnemograph import PRESET_LABELS

SUMMARY_METRICS = ("turn.R@10", "turn.MRR", "session.R@10", "session.MRR")


def _label(config: str) -> str:
    return PRESET_LABELS.get(config, config)


def _v(x: float | None) -> float:
    return float(x) if x is not None else 0.0


def metric_by_config(result: dict[str, Any], out: Path) -> Path | None:
    """One panel per setting: the four summary metrics per recall configuration."""
    summary = result.get("summary") or {}
    settings = [s for s in summary if summary[s]]
    if not settings:
        return None
    fig, axes = plt.subplots(
        1, len(settings), figsize=(6.5 * len(settings), 4.2), squeeze=False, sharey=True
    )
    for ax, setting in zip(axes[0], settings, strict=True):
        configs = list(summary[setting])
        width = 0.8 / len(SUMMARY_METRICS)
        for i, m in enumerate(SUMMARY_METRICS):
            xs = [j + (i - (len(SUMMARY_METRICS) - 1) / 2) * width for j in range(len(configs))]
            vals = [_v(summary[setting][c].get(m)) for c in configs]
            bars = ax.bar(xs, vals, width, label=m)
            ax.bar_label(bars, fmt="%.2f", fontsize=6, padding=1)
        pool = result["results"][setting].get("pool", {}).get("memories", {})
        ax.set_title(f"{setting} (pool: {pool.get('mean', '?')} memories/space)", fontsize=10)
        ax.set_xticks(range(len(configs)), [_label(c) for c in configs], rotation=20, fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("score")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=len(SUMMARY_METRICS))
    fig.suptitle(f"{result.get('name', '')}: recall by configuration", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def metric_by_category(
    result: dict[str, Any], out: Path, metrics: Sequence[str] = ("turn.R@10", "session.R@10")
) -> Path | None:
    """Rows: metric; columns: setting; bars: one per configuration, grouped by category."""
    res = result.get("results") or {}
    settings = [s for s in res if res[s].get("configs")]
    if not settings:
        return None
    fig, axes = plt.subplots(
        len(metrics),
        len(settings),
        figsize=(6.5 * len(settings), 3.6 * len(metrics)),
        squeeze=False,
        sharey=True,
    )
    for col, setting in enumerate(settings):
        configs = res[setting]["configs"]
        cats = sorted({c for cfg in configs.values() for c in cfg["turn"]["by_category"]})
        width = 0.8 / max(len(configs), 1)
        for row, metric in enumerate(metrics):
            level, name = metric.split(".", 1)
            ax = axes[row][col]
            for i, (config, cfg) in enumerate(configs.items()):
                xs = [j + (i - (len(configs) - 1) / 2) * width for j in range(len(cats))]
                vals = [_v(cfg[level]["by_category"].get(c, {}).get(name)) for c in cats]
                ax.bar(xs, vals, width, label=_label(config))
            ax.set_xticks(range(len(cats)), cats, fontsize=8)
            ax.set_ylim(0, 1.05)
            ax.grid(axis="y", alpha=0.3)
            ax.set_title(f"{setting}: {metric} by category", fontsize=10)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=min(len(labels), 7))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def context_by_budget(result: dict[str, Any], out: Path) -> Path | None:
    """Context recall (any gold turn in the context) against the token budget."""
    res = result.get("results") or {}
    settings = [s for s in res if res[s].get("context")]
    if not settings:
        return None
    fig, axes = plt.subplots(
        1, len(settings), figsize=(5.5 * len(settings), 3.8), squeeze=False, sharey=True
    )
    for ax, setting in zip(axes[0], settings, strict=True):
        for system, by_budget in res[setting]["context"].items():
            budgets = sorted(by_budget, key=int)
            for key, style in (("any", "-o"), ("all", "--s")):
                ax.plot(
                    [int(b) for b in budgets],
                    [_v(by_budget[b].get(key)) for b in budgets],
                    style,
                    label=f"{system} ({key} gold)",
                )
        ax.set_xscale("log", base=2)
        ax.set_xlabel("token budget (chars/3)")
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
        ax.set_title(f"{setting}: context recall", fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def latency_vs_size(perf: dict[str, Any], out: Path) -> Path | None:
    """p50 / p95 latency of recall, bare vector query and context against corpus size."""
    rows = perf.get("latency") or []
    if not rows:
        return None
    sizes = [r["memories"] for r in rows]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    series = [
        ("recall", "recall", "tab:blue"),
        ("vector_bare", "bare vector query", "tab:green"),
        ("vector_bare_with_embedding", "bare vector + query embedding", "tab:olive"),
        ("context", "context", "tab:red"),
    ]
    for key, label, color in series:
        p50 = [(r.get(key) or {}).get("p50_ms") for r in rows]
        p95 = [(r.get(key) or {}).get("p95_ms") for r in rows]
        pts = [(s, a, b) for s, a, b in zip(sizes, p50, p95, strict=True) if a is not None]
        if not pts:
            continue
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", color=color, label=f"{label} p50")
        ax.plot(
            [p[0] for p in pts], [p[2] for p in pts], "--", color=color, alpha=0.6,
            label=f"{label} p95",
        )  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memories in the space")
    ax.set_ylabel("latency (ms)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    ax.set_title("latency against corpus size", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out

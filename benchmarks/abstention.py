"""Abstention calibration on the kept spaces of harness runs, several datasets together.

    python -m benchmarks.abstention collect --dataset beam --result RUN.json \\
        --neo4j-uri bolt://... [--label NAME] --out beam-features.jsonl
    python -m benchmarks.abstention calibrate beam-features.jsonl locomo-features.jsonl \\
        [--max-false-rate 0.1] [--out calibration.json] [--plot calibration.png]

``collect`` asks every question (those without evidence too) through preset ``full`` and keeps
what the ``abstain`` step reads (:class:`~pipelines.recall.abstain.AbstentionInputs`) with the
question's label (unanswerable or not), which only the scorer reads. ``--label`` names the set
(the dataset by default): a scale run counts apart from the per-conversation run of its data.

``calibrate`` replays :func:`~pipelines.recall.abstain.decide_abstention` over a grid of
thresholds and reports precision / recall / F1 per dataset (unanswerable questions are the
positive class) for the defaults, for the grid point with the best mean F1 over the datasets
(each dataset counts once, whatever its size) among those that abstain on at most
``--max-false-rate`` of any dataset's answerable questions, and two-fold: the best point of
one dataset scored on each other.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.metrics import abstention_metrics
from benchmarks.signals import _Engine, kept_spaces, load_dataset, recall_state

#: The thresholds swept by ``calibrate`` (every other field keeps its default).
GRID: dict[str, Sequence[float]] = {
    "min_evidence": [round(0.2 + 0.025 * i, 3) for i in range(13)],
    "min_speaker_match": [0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5],
    "min_vector_similarity": [0.1, 0.15, 0.2, 0.25, 0.3],
    "strong_vector_similarity": [0.5, 0.6, 0.7],
    "min_keyword_coverage": [0.25, 0.34, 0.5, 0.67],
}


def collect(
    dataset_name: str, path: str | None, result: Path, uri: str, workers: int, label: str
) -> list[dict[str, Any]]:
    from tqdm import tqdm

    from benchmarks.instance import start_engine
    from benchmarks.presets import BENCH_PRESETS
    from pipelines.recall.config import DEFAULT_RECALL_CONFIG
    from pipelines.recall.request import RecallRequest
    from pipelines.recall.service import Recaller
    from pipelines.recall.steps.abstain import abstention_inputs

    dataset = load_dataset(dataset_name, path)
    spaces = kept_spaces(json.loads(result.read_text()))
    engine = start_engine(uri)
    recaller = Recaller(_Engine(engine), DEFAULT_RECALL_CONFIG)  # type: ignore[arg-type]
    preset = BENCH_PRESETS["full"]
    questions = [(c, q) for c in dataset.conversations if c.id in spaces for q in c.questions]

    def one(cq: tuple[Any, Any]) -> dict[str, Any]:
        c, q = cq
        request = RecallRequest(query=q.text, k=10, touch=False, now=q.question_time)
        state = recall_state(recaller, spaces[c.id], request, preset, trace=False)
        inputs = abstention_inputs(state, DEFAULT_RECALL_CONFIG.abstention)
        return {
            "dataset": label,
            "conversation": c.id,
            "question": q.id,
            "category": q.category,
            "unanswerable": q.unanswerable,
            "inputs": dataclasses.asdict(inputs),
        }

    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(tqdm(pool.map(one, questions), total=len(questions), desc="questions"))
    finally:
        engine.close()


def grid_points() -> Iterator[dict[str, float]]:
    names = list(GRID)
    for values in itertools.product(*(GRID[n] for n in names)):
        point = dict(zip(names, values, strict=True))
        if point["strong_vector_similarity"] > point["min_vector_similarity"]:
            yield point


def score(rows: Sequence[dict[str, Any]], overrides: dict[str, float]) -> dict[str, dict[str, Any]]:
    """Abstention metrics per dataset with ``overrides`` on the default thresholds."""
    from pipelines.recall.abstain import AbstentionInputs, decide_abstention
    from pipelines.recall.config import DEFAULT_RECALL_CONFIG

    thresholds = DEFAULT_RECALL_CONFIG.abstention.model_copy(update=overrides)
    outcomes: dict[str, list[tuple[bool, bool]]] = {}
    for r in rows:
        decision = decide_abstention(AbstentionInputs(**r["inputs"]), thresholds)
        outcomes.setdefault(r["dataset"], []).append((r["unanswerable"], decision.abstain))
    return {name: abstention_metrics(o) for name, o in sorted(outcomes.items())}


def _f1(m: dict[str, Any]) -> float:
    return float(m["f1"] or 0.0)


def best(
    table: Sequence[tuple[dict[str, float], dict[str, dict[str, Any]]]],
    datasets: Sequence[str],
    max_false_rate: float,
) -> tuple[dict[str, float], dict[str, dict[str, Any]]] | None:
    """The grid point with the best mean F1 over ``datasets`` whose false-abstention rate
    stays within ``max_false_rate`` on every dataset (ties: fewer false abstentions)."""
    allowed = [
        (point, metrics)
        for point, metrics in table
        if all((metrics[d]["abstain_rate_answerable"] or 0.0) <= max_false_rate for d in metrics)
    ]
    if not allowed:
        return None

    def key(entry: tuple[dict[str, float], dict[str, dict[str, Any]]]) -> tuple[float, float]:
        metrics = entry[1]
        mean_f1 = sum(_f1(metrics[d]) for d in datasets) / len(datasets)
        false = sum(metrics[d]["abstain_rate_answerable"] or 0.0 for d in metrics)
        return (mean_f1, -false)

    return max(allowed, key=key)


def calibrate(rows: Sequence[dict[str, Any]], max_false_rate: float) -> dict[str, Any]:
    from tqdm import tqdm

    datasets = sorted({r["dataset"] for r in rows})
    points = list(grid_points())
    table = [(p, score(rows, p)) for p in tqdm(points, desc="grid")]
    out: dict[str, Any] = {
        "grid": GRID,
        "max_false_rate": max_false_rate,
        "questions": {d: sum(1 for r in rows if r["dataset"] == d) for d in datasets},
        "defaults": score(rows, {}),
    }
    joint = best(table, datasets, max_false_rate)
    out["joint"] = {"thresholds": joint[0], "metrics": joint[1]} if joint else None
    out["two_fold"] = {}
    for chosen_on in datasets:
        choice = best(table, [chosen_on], max_false_rate)
        if choice is not None:
            out["two_fold"][chosen_on] = {"thresholds": choice[0], "metrics": choice[1]}
    out["curve"] = [
        {"thresholds": p, "metrics": m}
        for p, m in table
        if joint is None or all(p[k] == v for k, v in joint[0].items() if k != "min_evidence")
    ]
    return out


def plot(report: dict[str, Any], table_rows: Sequence[dict[str, Any]], out: Path) -> Path:
    """Precision against recall per dataset along ``min_evidence`` (the other thresholds at
    the joint choice), with the defaults and the joint choice marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(report["questions"])
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.5 * len(datasets), 4.2), squeeze=False)
    for ax, d in zip(axes[0], datasets, strict=True):
        xs = [e["metrics"][d]["recall"] or 0.0 for e in table_rows]
        ys = [e["metrics"][d]["precision"] or 0.0 for e in table_rows]
        ax.plot(xs, ys, "o-", ms=3, label="min_evidence swept")
        for name, entry, marker in (
            ("defaults", {"metrics": report["defaults"]}, "s"),
            ("joint choice", report["joint"], "*"),
        ):
            if entry:
                m = entry["metrics"][d]
                ax.plot(m["recall"] or 0.0, m["precision"] or 0.0, marker, ms=11, label=name)
        ax.set(xlabel="recall (unanswerable)", ylabel="precision", title=d, xlim=(0, 1))
        ax.set_ylim(0, 1)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _line(name: str, metrics: dict[str, dict[str, Any]]) -> str:
    cells = "  ".join(
        f"{d} P {m['precision'] or 0:.3f} R {m['recall'] or 0:.3f} F1 {m['f1'] or 0:.3f} "
        f"false {m['abstain_rate_answerable'] or 0:.3f}"
        for d, m in metrics.items()
    )
    return f"{name:18s} {cells}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.abstention", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="abstention features of every question")
    c.add_argument("--dataset", choices=["beam", "locomo", "generic"], required=True)
    c.add_argument("--path", default=None)
    c.add_argument("--result", type=Path, required=True, help="result JSON of a kept run")
    c.add_argument("--neo4j-uri", required=True)
    c.add_argument("--workers", type=int, default=2)
    c.add_argument("--label", default=None, help="name of this set (default: the dataset's)")
    c.add_argument("--out", type=Path, required=True, help="features (JSON lines)")
    k = sub.add_parser("calibrate", help="sweep the thresholds over collected features")
    k.add_argument("features", type=Path, nargs="+")
    k.add_argument("--max-false-rate", type=float, default=0.1)
    k.add_argument("--out", type=Path, default=None)
    k.add_argument("--plot", type=Path, default=None)
    args = p.parse_args(argv)

    if args.command == "collect":
        label = args.label or args.dataset
        rows = collect(args.dataset, args.path, args.result, args.neo4j_uri, args.workers, label)
        args.out.write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))
        print(_line("defaults", score(rows, {})))
        return 0
    rows = [json.loads(line) for f in args.features for line in f.read_text().splitlines()]
    report = calibrate(rows, args.max_false_rate)
    print(_line("defaults", report["defaults"]))
    if report["joint"]:
        print(_line("joint", report["joint"]["metrics"]), report["joint"]["thresholds"])
    for chosen_on, entry in report["two_fold"].items():
        print(_line(f"chosen on {chosen_on}", entry["metrics"]), entry["thresholds"])
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    if args.plot:
        print(plot(report, report["curve"], args.plot))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

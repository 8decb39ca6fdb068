"""Un-blinding the reader-judged benchmark: grades + key -> scores per condition, budget and
ability, paired wins / losses / ties and a two-sided sign test.

A grade is ``{label, nugget_scores, score}``: each nugget 0, 0.5 or 1, the answer's score their
mean (recomputed here; a grader's own ``score`` that disagrees is counted, not used). Pairs are
the two conditions' answers to one question at one budget; a question missing either is left
out of the pairs (and counted).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from statistics import mean
from typing import Any

from benchmarks.metrics import sign_test
from benchmarks.reader_packs import Keyed, PackError
from benchmarks.reader_prompts import CONDITIONS

NUGGET_SCORES = (0.0, 0.5, 1.0)
_TOLERANCE = 1e-6


def answer_score(label: str, grade: Mapping[str, Any]) -> tuple[float, bool]:
    """The mean of ``grade``'s nugget scores, and whether the grader's own score agreed."""
    scores = grade.get("nugget_scores")
    if not isinstance(scores, list) or not scores:
        raise PackError(f"grade {label}: 'nugget_scores' must be a non-empty list")
    for s in scores:
        if not isinstance(s, int | float) or float(s) not in NUGGET_SCORES:
            raise PackError(f"grade {label}: nugget score {s!r} is not 0, 0.5 or 1")
    value = sum(float(s) for s in scores) / len(scores)
    own = grade.get("score")
    agrees = isinstance(own, int | float) and abs(float(own) - value) < _TOLERANCE
    return value, agrees


def _mean(values: Sequence[float]) -> float | None:
    return round(mean(values), 4) if values else None


def _pairs(scores: Mapping[tuple[str, str], float]) -> dict[str, Any]:
    """Wins, losses and ties of the first condition over the second, over the questions
    both have, with the sign test and the mean difference."""
    first, second = CONDITIONS
    questions = sorted({q for q, _ in scores})
    wins = losses = ties = 0
    diffs = []
    for q in questions:
        a, b = scores.get((q, first)), scores.get((q, second))
        if a is None or b is None:
            continue
        diffs.append(a - b)
        if a > b + _TOLERANCE:
            wins += 1
        elif b > a + _TOLERANCE:
            losses += 1
        else:
            ties += 1
    return {
        "pairs": len(diffs),
        "wins": wins,
        "losses": losses,
        "ties": ties,
        "mean_difference": _mean(diffs),
        "sign_test_p": round(sign_test(wins, losses), 6),
    }


def unblind(key: Mapping[str, Keyed], grades: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The report's numbers (see the module docstring)."""
    scored: dict[int, dict[tuple[str, str], float]] = defaultdict(dict)
    category: dict[str, str] = {}
    disagreements = 0
    for label, grade in grades.items():
        k = key[label]
        value, agrees = answer_score(label, grade)
        disagreements += not agrees
        scored[k.budget][(k.question_id, k.condition)] = value
        category[k.question_id] = k.category
    budgets: dict[str, Any] = {}
    for budget in sorted(scored):
        scores = scored[budget]
        by_condition = {c: [v for (q, cond), v in scores.items() if cond == c] for c in CONDITIONS}
        abilities: dict[str, Any] = {}
        for ability in sorted({category[q] for q, _ in scores}):
            part = {qc: v for qc, v in scores.items() if category[qc[0]] == ability}
            abilities[ability] = {
                **{
                    c: {"n": len(vs), "mean": _mean(vs)}
                    for c in CONDITIONS
                    for vs in [[v for (q, cond), v in part.items() if cond == c]]
                },
                **_pairs(part),
            }
        budgets[str(budget)] = {
            **{c: {"n": len(v), "mean": _mean(v)} for c, v in by_condition.items()},
            **_pairs(scores),
            "by_ability": abilities,
        }
    expected = len(key)
    return {
        "conditions": list(CONDITIONS),
        "labels": expected,
        "graded": len(grades),
        "ungraded": expected - len(grades),
        "score_disagreements": disagreements,
        "budgets": budgets,
    }


def _f(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}"


def markdown(name: str, meta: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    first, second = CONDITIONS
    lines = [
        f"# Reader-judged benchmark `{name}`",
        "",
        f"- dataset: {meta.get('dataset')}; run: `{meta.get('run')}`; setting "
        f"{meta.get('setting')}; prepared {meta.get('created_at')} with code "
        f"`{meta.get('code', {}).get('commit', 'unknown')}`",
        f"- {result['labels']} prompts, {result['graded']} graded ({result['ungraded']} not); "
        f"grader scores that disagreed with their nuggets' mean: "
        f"{result['score_disagreements']} (the mean is used)",
        "- method: benchmarks/reader_judged.py (docs/reader-judged.md); readers and graders "
        "blind to the condition; score = mean of the rubric nuggets (0 / 0.5 / 1 each)",
        "",
        f"| budget | {first} | {second} | difference | wins / losses / ties | sign test p |",
        "|---|---|---|---|---|---|",
    ]
    for budget, b in result["budgets"].items():
        lines.append(
            f"| {budget} | {_f(b[first]['mean'])} ({b[first]['n']}) | "
            f"{_f(b[second]['mean'])} ({b[second]['n']}) | {_f(b['mean_difference'])} | "
            f"{b['wins']} / {b['losses']} / {b['ties']} | {b['sign_test_p']:.4f} |"
        )
    lines.append("")
    for budget, b in result["budgets"].items():
        lines += [
            f"## Budget {budget}: per ability",
            "",
            f"| ability | {first} | {second} | difference | wins / losses / ties | p |",
            "|---|---|---|---|---|---|",
        ]
        for ability, a in b["by_ability"].items():
            lines.append(
                f"| {ability} | {_f(a[first]['mean'])} ({a[first]['n']}) | "
                f"{_f(a[second]['mean'])} ({a[second]['n']}) | {_f(a['mean_difference'])} | "
                f"{a['wins']} / {a['losses']} / {a['ties']} | {a['sign_test_p']:.4f} |"
            )
        lines.append("")
    return "\n".join(lines)

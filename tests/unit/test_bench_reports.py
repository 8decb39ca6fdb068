"""Reports and plots from a result document (no database)."""

from __future__ import annotations

from benchmarks import reports, runner
from benchmarks.perf import write_perf_report


def _metrics(v: float) -> dict:
    base = {"n": 3, "n_multi": 1, "R@1": v, "R@5": v, "R@10": v, "MRR": v, "FR@10": v}
    return {**base, "answerable": base, "by_category": {"single-hop": base, "temporal": base}}


def recall_result() -> dict:
    pool = {
        "spaces": 2,
        "memories": {"mean": 10.0, "min": 8, "max": 12, "total": 20},
        "sessions": {"mean": 2.0, "min": 2, "max": 2, "total": 4},
    }
    configs = {
        c: {
            "pool": pool,
            "questions": 4,
            "turn": _metrics(0.5),
            "session": _metrics(0.9),
            "abstention": {"precision": 0.5, "recall": 1.0, "f1": 2 / 3},
            "latency": {"p50_ms": 10.0, "p95_ms": 20.0},
        }
        for c in ("dense", "full")
    }
    for c in ("turn", "session"):  # intents: only "full" has them
        configs["full"][c] = {**configs["full"][c], "by_intent": {"temporal": _metrics(0.25)}}
        configs["dense"][c] = {**configs["dense"][c], "by_intent": {"(none)": _metrics(0.5)}}
    ctx = {
        "n": 3,
        "any": 0.7,
        "all": 0.5,
        "frac": 0.6,
        "memories_mean": 5.0,
        "used_tokens_mean": 900.0,
        "latency": {"p50_ms": 12.0},
        "modes": {"staged": 3},
        "pool": pool,
    }
    setting = {
        "questions": 4,
        "questions_without_evidence": 1,
        "pool": pool,
        "configs": configs,
        "context": {"flat": {"1000": ctx, "2000": ctx}, "assembler": {"1000": ctx}},
        "context_status": {"flat": "run", "assembler": "run"},
        "seconds": 1.0,
    }
    results = {"per-conversation": setting, "scale": setting}
    return {
        "name": "unit-report",
        "dataset": {"name": "x", "conversations": 2},
        "machine": {"cores": 2},
        "code": {"commit": "unknown"},
        "summary": runner.summary_keys(results),
        "results": results,
    }


def test_summary_keys():
    s = runner.summary_keys(recall_result()["results"])
    assert s["scale"]["full"] == {
        "turn.R@10": 0.5,
        "turn.MRR": 0.5,
        "session.R@10": 0.9,
        "session.MRR": 0.9,
    }


def test_recall_report_files(tmp_path):
    files = reports.write_recall_report(recall_result(), tmp_path)
    assert files["json"].exists() and files["markdown"].exists()
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == [
        "unit-report-by-category.png",
        "unit-report-by-config.png",
        "unit-report-context.png",
    ]
    for p in tmp_path.glob("*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = files["markdown"].read_text()
    assert "## Setting: scale" in md and "| full |" in md and "10 mem (8–12)" in md
    assert "![unit-report-by-config](unit-report-by-config.png)" in md
    assert "Per intent" in md
    assert "| full | temporal | 3 | 0.250 | 0.250 | 0.250 | 0.250 |" in md
    assert "(none)" not in md  # a configuration without intents gets no rows


def test_perf_report_files(tmp_path):
    lat = {"p50_ms": 10.0, "p95_ms": 30.0}
    rows = [
        {
            "memories": n,
            "recall": lat,
            "vector_bare": {"p50_ms": 2.0, "p95_ms": 4.0},
            "vector_bare_with_embedding": {"p50_ms": 8.0, "p95_ms": 9.0},
            "ratio_recall_to_vector_p50": 5.0,
            "ratio_recall_to_vector_with_embedding_p50": 1.25,
            "ingest": {"turns_per_s": 100.0},
            "rss_peak_mb": {"api_process": 900.0, "neo4j": 1500.0},
            "context": lat,
            "context_modes": {"flat": 2, "staged": 3},
            "context_by_mode": {"flat": {"p50_ms": 8.0, "p95_ms": 9.5}, "staged": lat},
        }
        for n in (1000, 10000)
    ]
    result = {
        "name": "unit-perf",
        "kind": "perf",
        "config": {"queries": 5, "repeats": 1, "k": 10},
        "latency": rows,
        "latency_info": {"recall_path": "service", "context_path": "not run"},
        "ingest_locomo": "skipped",
    }
    files = write_perf_report(result, tmp_path)
    assert (tmp_path / "unit-perf-latency.png").exists()
    md = files["markdown"].read_text()
    assert "| 10000 | 10.0 / 30.0 |" in md
    assert "chose): 1000 memories: flat 2, staged 3; 10000 memories: flat 2, staged 3" in md
    assert "modes): 1000 memories: flat 8.0 / 9.5, staged 10.0 / 30.0; 10000 memories:" in md

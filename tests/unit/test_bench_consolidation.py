"""The consolidation benchmark's pure parts: CPU accounting and the report."""

from __future__ import annotations

import os

from benchmarks.consolidation import TARGET_SECONDS, consolidation_markdown
from benchmarks.machine import process_cpu_seconds


def test_process_cpu_seconds_reads_this_process() -> None:
    before = process_cpu_seconds(os.getpid())
    sum(i * i for i in range(300_000))
    after = process_cpu_seconds(os.getpid())
    assert before is not None and after is not None
    assert after >= before
    assert process_cpu_seconds(None) is None
    assert process_cpu_seconds(2**30) is None  # no such process


def _result(total: float) -> dict:
    job = {
        "wall_s": total,
        "python_cpu_s": 1.0,
        "neo4j_cpu_s": None,
        "status": "succeeded",
        "dry_run": False,
        "counts": {"merged": 3},
        "errors": [],
    }
    return {
        "name": "c",
        "command": "python -m benchmarks consolidation",
        "code": {"commit": "abc"},
        "machine": {"cores": 2},
        "durations_s": {"total": total},
        "space": "s",
        "pool": {"memories": 10, "entities": 2, "stages": 1},
        "build_s": None,
        "pass": {
            "jobs": {"merge": job},
            "total_wall_s": total,
            "total_python_cpu_s": 1.0,
            "total_neo4j_cpu_s": None,
            "target_s": TARGET_SECONDS,
            "within_target": total <= TARGET_SECONDS,
        },
    }


def test_report_states_whether_the_target_is_met() -> None:
    fast = consolidation_markdown(_result(30.0))
    slow = consolidation_markdown(_result(500.0))
    assert "(target 120 s: met)" in fast
    assert "NOT met" in slow
    assert "| merge | 30.0 | 1.0 | – | succeeded | false | merged 3 |" in fast

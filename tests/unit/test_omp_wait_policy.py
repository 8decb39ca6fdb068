"""Importing the domain makes idle OpenMP threads sleep (``OMP_WAIT_POLICY=PASSIVE``) before
PyTorch loads, unless the variable is set already."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = "import pipelines.ingest.service, os; print(os.environ['OMP_WAIT_POLICY'])"


def _policy(env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if env_value is not None:
        env["OMP_WAIT_POLICY"] = env_value
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_idle_threads_sleep_by_default() -> None:
    assert _policy(None) == "PASSIVE"


def test_an_explicit_policy_is_kept() -> None:
    assert _policy("ACTIVE") == "ACTIVE"

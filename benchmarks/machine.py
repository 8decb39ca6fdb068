"""Where and on what code a benchmark ran: machine description, code commit, process memory."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def code_version(root: Path = REPO_ROOT) -> dict[str, Any]:
    """``git rev-parse HEAD`` and whether the tree had uncommitted changes (result files under
    benchmarks/results/ do not count: an earlier run's output is not a code change); "unknown"
    outside a git checkout."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--", ".", ":(exclude)benchmarks/results"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}
    out: dict[str, Any] = {"commit": commit or "unknown", "dirty": bool(status.strip())}
    if out["dirty"]:
        out["worktree_sha256"] = worktree_fingerprint(root)
    return out


def worktree_fingerprint(root: Path = REPO_ROOT) -> str | None:
    """sha256 over the paths and contents of the code the run used (tracked and untracked, not
    ignored, outside benchmarks/results): identifies an uncommitted tree."""
    try:
        files = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):
        return None
    h = hashlib.sha256()
    for name in sorted(f for f in files if f and not f.startswith("benchmarks/results/")):
        path = root / name
        if path.is_file():
            h.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def machine() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "cores_available": (
            len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        ),
        "ram_gb": _ram_gb(),
        "cpu": _cpu_model(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }


def load_average() -> list[float] | None:
    """1/5/15-minute load averages: the machine is shared, so contention is recorded."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def proc_status_kb(pid: int, key: str) -> int | None:
    """A ``/proc/<pid>/status`` value in kB (``VmHWM`` = peak RSS, ``VmRSS`` = current)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def peak_rss_mb(pid: int) -> float | None:
    kb = proc_status_kb(pid, "VmHWM")
    return round(kb / 1024, 1) if kb is not None else None


def process_cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of ``pid`` (Linux ``/proc``), ``None`` when unreadable."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def record(load_start: list[float] | None) -> dict[str, Any]:
    """The ``machine`` entry of a result: :func:`machine` plus the load average at the start
    of the run (``load_start``) and now, at its end."""
    return {**machine(), "load_average_start": load_start, "load_average_end": load_average()}


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")

"""The Neo4j + API pair the reliability campaign (chaos, load, fuzz) owns, on loopback only.

The campaign exercises the service the way an operator runs it: a real Neo4j + GDS process
(``neo4j_runtime``, its own data directory and Bolt port) and the API as a separate process
(``python -m app serve``), so both can be killed with SIGKILL and restarted. Every address is
127.0.0.1; nothing here can point at another host.

:class:`Outcome` classifies one HTTP exchange: its status (or ``timeout`` / ``conn_error``), its
latency, and whether the body was the documented JSON error shape (a 5xx with any other body is
a "plain-text 500").
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from neo4j_runtime import runtime
from neo4j_runtime.settings import InstanceConfig

REPO_ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"


def campaign_instance(
    name: str, port: int, base_dir: Path, heap: str = "2g", pagecache: str = "1g"
) -> InstanceConfig:
    """A Neo4j instance on 127.0.0.1:``port`` with its data under ``base_dir``. The heap and
    page cache default to the dev server's maximum heap (``make serve``)."""
    return InstanceConfig(
        name=name,
        base_dir=base_dir.resolve(),
        bolt_port=port,
        host=LOOPBACK,
        heap_initial=heap,
        heap_max=heap,
        pagecache=pagecache,
    )


def _wait_dead(pid: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and runtime._alive(pid):  # reaps our own child too
        time.sleep(0.05)


_HEAP = re.compile(r"total (\d+)K, used (\d+)K")


class Neo4jProcess:
    """A Neo4j + GDS server this process started and may kill."""

    def __init__(self, instance: InstanceConfig) -> None:
        self.instance = instance
        self.pid: int | None = None
        self.starts = 0

    @property
    def uri(self) -> str:
        return self.instance.bolt_uri

    def start(self, timeout: float = 300.0) -> float:
        """Start (or reuse) the server and wait until it answers GDS queries; seconds taken."""
        started = runtime.start(self.instance, timeout=timeout, quiet=True)
        self.pid = started.pid
        self.starts += 1
        return started.seconds

    def kill9(self) -> None:
        """SIGKILL, as a crash would; returns once the process is gone."""
        if self.pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        _wait_dead(self.pid)
        self.pid = None

    def stop(self) -> None:
        runtime.stop(self.instance)
        self.pid = None

    def heap_mb(self) -> dict[str, float] | None:
        """Used and committed heap from ``jcmd <pid> GC.heap_info`` (no JMX needed)."""
        if self.pid is None:
            return None
        try:
            out = subprocess.run(
                ["jcmd", str(self.pid), "GC.heap_info"],
                capture_output=True,
                text=True,
                timeout=20,
                check=False,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        m = _HEAP.search(out)
        if not m:
            return None
        return {"committed_mb": int(m.group(1)) / 1024, "used_mb": int(m.group(2)) / 1024}

    def out_of_memory_errors(self) -> int:
        """``OutOfMemoryError`` lines in the server's console and debug logs."""
        count = 0
        for path in self.instance.logs_dir.glob("*.log"):
            with contextlib.suppress(OSError):
                count += path.read_text(errors="replace").count("OutOfMemoryError")
        return count


@dataclass
class ApiProcess:
    """``python -m app serve`` on 127.0.0.1:``port`` against ``neo4j_uri``, logged in as
    ``neo4j_auth``."""

    port: int
    neo4j_uri: str
    neo4j_auth: tuple[str, str] | None
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self, timeout: float = 300.0) -> float:
        """Start the API and wait for ``/readyz`` to answer 200; seconds taken."""
        t0 = time.monotonic()
        env = dict(os.environ)
        env.update(
            {
                "MNEMOGRAPH_NEO4J_URI": self.neo4j_uri,
                "MNEMOGRAPH_NEO4J_USER": self.neo4j_auth[0] if self.neo4j_auth else "",
                "MNEMOGRAPH_NEO4J_PASSWORD": self.neo4j_auth[1] if self.neo4j_auth else "",
                "MNEMOGRAPH_HOST": LOOPBACK,
                "MNEMOGRAPH_PORT": str(self.port),
                "MNEMOGRAPH_MANAGE_NEO4J": "false",
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false",
            }
        )
        env.update(self.env)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child process
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--host", LOOPBACK, "--port", str(self.port)],
            cwd=REPO_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        log.close()
        self.starts += 1
        deadline = t0 + timeout
        with httpx.Client(base_url=self.base_url, timeout=5.0) as client:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the API exited during start-up; see {self.log_path}")
                with contextlib.suppress(httpx.HTTPError):
                    if client.get("/readyz").status_code == 200:
                        return time.monotonic() - t0
                time.sleep(0.25)
        raise RuntimeError(f"the API was not ready within {timeout:.0f}s; see {self.log_path}")

    def kill9(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.proc = None

    def stop(self, timeout: float = 30.0) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
        self.proc = None

    def rss_mb(self) -> float | None:
        if self.proc is None:
            return None
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except (OSError, ValueError, IndexError):
            return None
        return None


@dataclass
class Outcome:
    """One request's result. ``status`` is the HTTP status, or ``"timeout"``,
    ``"conn_refused"`` (the request never reached the server) or ``"conn_error"`` (sent, but
    the connection broke before an answer) when no response came back."""

    status: int | str
    seconds: float
    json_error: bool = False
    """The body is the documented error shape ``{"error": {"code", "message", ...}}``."""
    body: Any = None
    retry_after: str | None = None

    @property
    def ok(self) -> bool:
        return isinstance(self.status, int) and 200 <= self.status < 300

    @property
    def plain_5xx(self) -> bool:
        """A server error whose body is not the documented JSON error."""
        return isinstance(self.status, int) and self.status >= 500 and not self.json_error


def _classify(response: httpx.Response, seconds: float) -> Outcome:
    body: Any = None
    json_error = False
    with contextlib.suppress(ValueError, json.JSONDecodeError):
        body = response.json()
        json_error = (
            isinstance(body, dict)
            and isinstance(body.get("error"), dict)
            and "code" in body["error"]
            and "message" in body["error"]
        )
    return Outcome(
        response.status_code,
        seconds,
        json_error,
        body,
        response.headers.get("retry-after"),
    )


def _no_answer(exc: httpx.TransportError, seconds: float) -> Outcome:
    if isinstance(exc, httpx.TimeoutException):
        return Outcome("timeout", seconds)
    if isinstance(exc, httpx.ConnectError):
        return Outcome("conn_refused", seconds)
    return Outcome("conn_error", seconds)


def call(
    client: httpx.Client, method: str, path: str, body: Any = None, timeout: float | None = None
) -> Outcome:
    """One request; never raises for transport errors (they become the outcome)."""
    t0 = time.monotonic()
    try:
        kwargs: dict[str, Any] = {"json": body} if body is not None else {}
        if timeout is not None:
            kwargs["timeout"] = timeout
        response = client.request(method, path, **kwargs)
    except httpx.TransportError as exc:
        return _no_answer(exc, time.monotonic() - t0)
    return _classify(response, time.monotonic() - t0)


async def acall(client: httpx.AsyncClient, method: str, path: str, body: Any = None) -> Outcome:
    t0 = time.monotonic()
    try:
        kwargs: dict[str, Any] = {"json": body} if body is not None else {}
        response = await client.request(method, path, **kwargs)
    except httpx.TransportError as exc:
        return _no_answer(exc, time.monotonic() - t0)
    return _classify(response, time.monotonic() - t0)


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100); ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
    return ordered[rank - 1]


def free_memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024 / 1024
    except (OSError, ValueError):
        return None
    return None


def check_loopback(url: str) -> None:
    host = httpx.URL(url).host
    if host != LOOPBACK:
        raise SystemExit(f"the campaign only talks to {LOOPBACK}; refusing {url}")

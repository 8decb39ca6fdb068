"""The benchmarks' own Neo4j + GDS instance, started and stopped by the harness.

Benchmarks never touch a development server: by default they run a dedicated instance with its
data under ``.mnemograph/bench-neo4j`` of the checkout (``MNEMOGRAPH_BENCH_NEO4J_DIR``), on port
7697 (``MNEMOGRAPH_BENCH_NEO4J_PORT``), with a 2 GB heap and a 2 GB page cache. If that instance
is already running (a previous run left it, or ``--keep-neo4j``) it is reused and left running;
an instance the harness started is stopped at the end. Its Neo4j has authentication on, like
every local instance (the password generated into ``<data dir>/neo4j-password``).
``--neo4j-uri`` points the harness at any other server instead (nothing is started or stopped
then; its credentials come from MNEMOGRAPH_NEO4J_USER / MNEMOGRAPH_NEO4J_PASSWORD).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PORT = 7697


@dataclass
class BenchNeo4j:
    uri: str
    pid: int | None
    started_here: bool
    base_dir: Path | None
    heap: str | None = None
    pagecache: str | None = None
    #: (user, password) of the managed instance; None: from the MNEMOGRAPH_NEO4J_* variables
    auth: tuple[str, str] | None = None
    #: memories per space found in the database before the run (:func:`preexisting_memories`)
    preexisting_memories: dict[str, int] | None = None

    def describe(self) -> dict[str, object]:
        return {
            "uri": self.uri,
            "managed": self.base_dir is not None,
            "started_by_harness": self.started_here,
            "data_dir": str(self.base_dir) if self.base_dir else None,
            "heap": self.heap,
            "pagecache": self.pagecache,
            "preexisting_memories": self.preexisting_memories,
        }


def bench_instance_config(heap: str = "2g", pagecache: str = "2g"):
    from neo4j_runtime.settings import InstanceConfig

    base = os.environ.get("MNEMOGRAPH_BENCH_NEO4J_DIR") or str(
        REPO_ROOT / ".mnemograph" / "bench-neo4j"
    )
    port = int(os.environ.get("MNEMOGRAPH_BENCH_NEO4J_PORT", str(DEFAULT_PORT)))
    return InstanceConfig(
        name="bench",
        base_dir=Path(base).resolve(),
        bolt_port=port,
        heap_initial=heap,
        heap_max=heap,
        pagecache=pagecache,
    )


def bench_login(uri: str) -> tuple[str, str] | None:
    """The dedicated instance's credentials if ``uri`` is its address and it has a password
    (a run given its URI, e.g. ``context_ab`` reusing its spaces); read, never created."""
    from neo4j_runtime import auth
    from neo4j_runtime.settings import NEO4J_USER

    base = Path(
        os.environ.get("MNEMOGRAPH_BENCH_NEO4J_DIR") or REPO_ROOT / ".mnemograph" / "bench-neo4j"
    ).resolve()
    port = int(os.environ.get("MNEMOGRAPH_BENCH_NEO4J_PORT", str(DEFAULT_PORT)))
    path = auth.password_path(base)
    if uri.rstrip("/") not in (f"bolt://127.0.0.1:{port}", f"bolt://localhost:{port}"):
        return None
    return (NEO4J_USER, auth.stored_password(base)) if path.exists() else None


@contextlib.contextmanager
def neo4j_for_bench(
    uri: str | None = None, *, keep: bool = False, heap: str = "2g", pagecache: str = "2g"
) -> Iterator[BenchNeo4j]:
    """Yield a Neo4j to benchmark against: ``uri`` as given, or the dedicated instance."""
    if uri:
        yield BenchNeo4j(uri=uri, pid=None, started_here=False, base_dir=None)
        return
    from neo4j_runtime import runtime

    inst = bench_instance_config(heap, pagecache)
    print(f"benchmark Neo4j: {inst.bolt_uri} (data {inst.base_dir}) …", flush=True)
    started = runtime.start(inst, timeout=300, quiet=True)
    how = "reused" if started.reused else f"started in {started.seconds:.0f}s"
    print(f"benchmark Neo4j {how}, pid {started.pid}", flush=True)
    info = BenchNeo4j(
        uri=inst.bolt_uri,
        pid=started.pid,
        started_here=not started.reused,
        base_dir=inst.base_dir,
        heap=heap,
        pagecache=pagecache,
        auth=inst.auth,
    )
    try:
        yield info
    finally:
        if info.started_here and not keep:
            runtime.stop(inst)
            print("benchmark Neo4j stopped", flush=True)


def start_engine(uri: str, auth: tuple[str, str] | None = None):
    """An :class:`Engine` on ``uri`` as ``auth`` (None: the MNEMOGRAPH_NEO4J_USER / _PASSWORD
    variables); models and reranker as the server's settings say (``MNEMOGRAPH_*``
    variables), loaded offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from app.services import engine_settings
    from app.settings import Settings
    from pipelines.engine import Engine

    settings = Settings(neo4j_uri=uri)
    auth = auth or (None if settings.neo4j_user else bench_login(uri))
    if auth is not None:
        settings.neo4j_user, settings.neo4j_password = auth
    return Engine.start(engine_settings(settings))


def preexisting_memories(engine, neo: BenchNeo4j) -> dict[str, int]:
    """Memories already in the benchmark database, per space, before the run starts.

    The vector and full-text indexes are global to the database: other spaces cost
    latency (the vector index is post-filtered by space) and, before the full-text index
    was restricted per space (migration 0004), they cost recall too. Every benchmark prints
    a warning and records this in its result (``neo.describe()``).
    """
    from benchmarks.cypher import statements

    rows = statements(engine.store).read("memories_per_space")
    counts = {str(r["space"]): int(r["memories"]) for r in rows}
    if counts:
        total = sum(counts.values())
        print(
            f"warning: the benchmark database already holds {total:,} memories in "
            f"{len(counts)} space(s) ({', '.join(sorted(counts)[:5])}"
            f"{', …' if len(counts) > 5 else ''}); they share the global indexes with this "
            "run. Delete them (DELETE /v1/spaces/{space}) for clean latency figures.",
            file=sys.stderr,
            flush=True,
        )
    neo.preexisting_memories = counts
    return counts

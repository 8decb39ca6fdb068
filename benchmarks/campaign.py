"""What the reliability campaign's three commands share: options, data directories, LoCoMo
payloads for the HTTP API, and the result header (command, commit, machine, load average).

``python -m benchmarks chaos`` (:mod:`benchmarks.chaos`), ``python -m benchmarks load``
(:mod:`benchmarks.load`) and ``python -m benchmarks fuzz`` (:mod:`benchmarks.fuzz`) each start
their own Neo4j and API on 127.0.0.1 (:mod:`benchmarks.served`) on a fresh database, and write
``benchmarks/results/<name>.{json,md}`` (``--out-dir`` elsewhere).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import machine
from benchmarks.format import Dataset, Session
from benchmarks.served import ApiProcess, Neo4jProcess, campaign_instance, free_memory_gb

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "benchmarks" / "results"
MARKER = ".mnemograph-campaign"


def add_common(p: argparse.ArgumentParser, name: str, neo4j_port: int, api_port: int) -> None:
    p.add_argument("--name", default=name, help=f"result name (default {name})")
    p.add_argument("--out-dir", type=Path, default=RESULTS_DIR, help="where results go")
    p.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="Neo4j data directory (default: MNEMOGRAPH_BENCH_NEO4J_DIR, else "
        f".mnemograph/{name}-neo4j); emptied first when a previous campaign run made it",
    )
    p.add_argument(
        "--neo4j-port",
        type=int,
        default=int(os.environ.get("MNEMOGRAPH_BENCH_NEO4J_PORT", str(neo4j_port))),
        help=f"Bolt port on 127.0.0.1 (default MNEMOGRAPH_BENCH_NEO4J_PORT, else {neo4j_port})",
    )
    p.add_argument("--api-port", type=int, default=api_port, help="API port on 127.0.0.1")
    p.add_argument("--heap", default="2g", help="Neo4j heap (the dev server's maximum: 2g)")
    p.add_argument("--pagecache", default="1g", help="Neo4j page cache")
    p.add_argument(
        "--reuse-data",
        action="store_true",
        help="keep the data directory of a previous run (not a fresh database)",
    )
    p.add_argument("--keep-data", action="store_true", help="keep the database files after the run")
    p.add_argument("--seed", type=int, default=0, help="random seed of the workload")


def data_dir(args: argparse.Namespace, name: str) -> Path:
    """The run's Neo4j directory, fresh unless ``--reuse-data``. Only a directory an earlier
    campaign run created (it holds :data:`MARKER`) is ever emptied."""
    base = args.data_dir or Path(
        os.environ.get("MNEMOGRAPH_BENCH_NEO4J_DIR") or REPO_ROOT / ".mnemograph" / f"{name}-neo4j"
    )
    base = Path(base).resolve()
    if base.exists() and any(base.iterdir()) and not args.reuse_data:
        if not (base / MARKER).exists():
            raise SystemExit(
                f"{base} exists and was not made by the campaign; choose another --data-dir"
            )
        shutil.rmtree(base)
    base.mkdir(parents=True, exist_ok=True)
    (base / MARKER).write_text("created by python -m benchmarks (reliability campaign)\n")
    return base


def remove_database(neo4j_dir: Path) -> None:
    """Delete the run's database files once the results are written (logs are kept)."""
    if (neo4j_dir.parent / MARKER).exists():
        shutil.rmtree(neo4j_dir / "data", ignore_errors=True)


@dataclass
class Served:
    """The running pair of a campaign command, and when (and under what load) it started."""

    base: Path
    neo: Neo4jProcess
    api: ApiProcess
    started: str
    load_start: list[float] | None


@contextlib.contextmanager
def served(args: argparse.Namespace, name: str) -> Iterator[Served]:
    """Start Neo4j and the API on a fresh data directory; stop both at the end. Refuses to
    start with less than 8 GB of memory available (the machine is shared)."""
    avail = free_memory_gb()
    if avail is not None and avail < 8:
        raise SystemExit(f"only {avail:.1f} GB of memory available (8 needed); try later")
    started, load_start = machine.now_iso(), machine.load_average()
    base = data_dir(args, name)
    neo = Neo4jProcess(
        campaign_instance(name, args.neo4j_port, base / "neo4j", args.heap, args.pagecache)
    )
    api = ApiProcess(args.api_port, neo.uri, neo.instance.auth, base / "api.log")
    try:
        print(f"{name}: Neo4j on {neo.uri} (data {base}) …", flush=True)
        neo.start()
        print(f"{name}: API on {api.base_url} …", flush=True)
        api.start()
        yield Served(base, neo, api, started, load_start)
    finally:
        api.stop()
        neo.stop()


def finish(
    args: argparse.Namespace, srv: Served, kind: str, body: dict[str, Any]
) -> dict[str, Any]:
    """The result: header, configuration and ``body``; the database files are removed unless
    ``--keep-data``."""
    if not args.keep_data:
        remove_database(srv.base / "neo4j")
    return {
        **header(kind, args.name, srv.load_start),
        "started_at": srv.started,
        "config": {
            k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "func"
        },
        "neo4j": {"uri": srv.neo.uri, "heap": args.heap, "pagecache": args.pagecache},
        **body,
    }


def header(kind: str, name: str, load_start: list[float] | None) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "command": "python -m benchmarks " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "code": machine.code_version(),
        "machine": machine.record(load_start),
        "ended_at": machine.now_iso(),
    }


def bars_table(bars: dict[str, bool]) -> list[str]:
    return ["## Bars", "", "| bar | met |", "|---|---|"] + [
        f"| {k} | {'yes' if v else '**no**'} |" for k, v in bars.items()
    ]


def header_lines(result: dict[str, Any]) -> list[str]:
    code = result.get("code") or {}
    mach = result.get("machine") or {}
    dirty = " (uncommitted changes)" if code.get("dirty") else ""
    return [
        f"- command: `{result.get('command')}`",
        f"- code: `{code.get('commit')}`{dirty}",
        f"- machine: {mach.get('cores')} cores, {mach.get('ram_gb')} GB RAM, {mach.get('cpu')}, "
        f"Python {mach.get('python')}; load average (1/5/15 min) at start "
        f"{mach.get('load_average_start')}, at end {mach.get('load_average_end')} "
        "(shared machine)",
        f"- started {result.get('started_at')}, ended {result.get('ended_at')}",
    ]


def write(result: dict[str, Any], markdown: str, out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    js = out_dir / f"{result['name']}.json"
    md = out_dir / f"{result['name']}.md"
    js.write_text(json.dumps(result, indent=1, default=str) + "\n")
    md.write_text(markdown)
    return {"json": js, "md": md}


# --------------------------------------------------------------------------- LoCoMo payloads


@dataclass(frozen=True)
class Line:
    role: str
    speaker: str
    content: str


def locomo_dataset() -> Dataset:
    """LoCoMo through :mod:`benchmarks.locomo` (read from the shared copy, never the repo)."""
    from benchmarks import locomo

    dataset, _ = locomo.load()
    return dataset


def session_body(session: Session, session_id: str, turn_prefix: str) -> dict[str, Any]:
    """A ``POST /sessions`` body for one LoCoMo session under new ids (URL-safe)."""
    return {
        "session_id": session_id,
        "started_at": session.started_at.isoformat() if session.started_at else None,
        "turns": [
            {
                "id": f"{turn_prefix}-{i}",
                "role": t.role,
                "speaker": t.speaker,
                "content": t.content,
            }
            for i, t in enumerate(session.turns)
        ],
    }


def lines(dataset: Dataset) -> Iterator[Line]:
    """Every turn of the dataset, in order, forever (synthetic sessions cycle through them)."""
    while True:
        for conv in dataset.conversations:
            for session in conv.sessions:
                for t in session.turns:
                    yield Line(t.role, t.speaker, t.content)


def turns_body(session_id: str, chunk: list[Line], turn_prefix: str) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "turns": [
            {
                "id": f"{turn_prefix}-{i}",
                "role": ln.role,
                "speaker": ln.speaker,
                "content": ln.content,
            }
            for i, ln in enumerate(chunk)
        ],
    }

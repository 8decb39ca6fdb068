"""Two checkouts' context assembler side by side on one space: same responses? how fast?

    python -m benchmarks.context_ab ingest --out spaces.json [--neo4j-uri URI]
    python -m benchmarks.context_ab schemas --spaces spaces.json
    python -m benchmarks.context_ab run --old /path/to/old/checkout --spaces spaces.json \\
        [--neo4j-uri URI] [--questions 300] [--out ab.json]

``ingest`` puts LoCoMo into the benchmark Neo4j (the scale setting: every conversation in one
space, stages from sessions, as the harness does; and the first conversation alone), builds
every stage's schema summary and writes the space ids.  The summaries are built up front
because the assembler builds missing ones on demand, and stage inference reads the ones that
exist: on a database where they are still being built, a call's answer depends on the calls
before it, in either checkout.  ``schemas`` builds them for spaces ingested earlier.

``run`` starts one worker process per checkout (this one and ``--old``, each importing its own
code, on the same database) and sends both the same calls, alternating which
goes first: every variant of every question is compared on its whole response (prompt,
sections, included ids, and the report without its timings), and the product call's latency
inside the worker is kept per checkout.  The output gives the p50 of each, their ratio and the
load average.  Questions are only ever sent as text; nothing about their answers is used.

The worker adapts to the assembler API of the checkout it runs in (a request dataclass with
``flat``/``ablate`` before the typed report; ``Experiment`` and an injected read-ahead pool
after), so the same file drives both.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: (name, request fields, flat, ablations): what every question is assembled with.
VARIANTS: list[tuple[str, dict[str, Any], bool, list[str]]] = [
    ("product-1000", {"context_window": 1000, "headroom": 1.0}, False, []),
    ("product-2000", {"context_window": 2000, "headroom": 1.0}, False, []),
    ("product-4000", {"context_window": 4000, "headroom": 1.0}, False, []),
    ("explain-2000", {"context_window": 2000, "headroom": 1.0, "explain": True}, False, []),
    ("api-defaults-4096", {"context_window": 4096}, False, []),
    ("as-of-2000", {"context_window": 2000, "headroom": 1.0, "as_of": True}, False, []),
    ("flat-2000", {"context_window": 2000, "headroom": 1.0}, True, []),
    ("no-ppr-2000", {"context_window": 2000, "headroom": 1.0, "explain": True}, False, ["ppr"]),
    ("no-selection-2000", {"context_window": 2000, "headroom": 1.0}, False, ["selection"]),
    ("no-summaries-2000", {"context_window": 2000, "headroom": 1.0}, False, ["summaries"]),
]
TIMED = "product-2000"


# ----------------------------------------------------------------------------- worker


def _worker(uri: str) -> int:
    """Serve assemble calls (JSON lines on stdin -> JSON lines on stdout) with the code
    found on sys.path."""
    from concurrent.futures import ThreadPoolExecutor

    from benchmarks.instance import start_engine
    from pipelines.assemble import service
    from pipelines.assemble.config import AssemblyConfig

    engine = start_engine(uri)
    config = AssemblyConfig(safety_margin=0)
    typed = "read_ahead" in inspect.signature(service.Assembler.__init__).parameters
    pool = ThreadPoolExecutor(max_workers=8) if typed else None
    assembler = (
        service.Assembler(engine, read_ahead=pool, config=config)
        if typed
        else service.Assembler(engine, config=config)
    )
    out = sys.stdout
    sys.stdout = sys.stderr  # progress and logs must not mix with the answers
    print(json.dumps({"ready": True, "code": str(Path(service.__file__).parents[2])}), file=out)
    out.flush()
    for line in sys.stdin:
        cmd = json.loads(line)
        fields = dict(cmd["fields"])
        for key in ("now", "as_of"):
            if fields.get(key):
                fields[key] = _parse_time(fields[key])
        t0 = time.perf_counter()
        if typed:
            experiment = service.Experiment(flat=cmd["flat"], ablate=frozenset(cmd["ablate"]))
            resp = assembler.assemble(cmd["space"], service.ContextRequest(**fields), experiment)
            report = resp.report.as_dict()
        else:
            request = service.ContextRequest(
                **fields, flat=cmd["flat"], ablate=frozenset(cmd["ablate"])
            )
            resp = assembler.assemble(cmd["space"], request)
            report = dict(resp.report)
        ms = (time.perf_counter() - t0) * 1000
        report.pop("timings_ms", None)
        body = {
            "prompt": resp.prompt,
            "sections": resp.sections,
            "included_ids": resp.included_ids,
            "report": report,
        }
        text = json.dumps(body, sort_keys=True, default=str)
        digest = hashlib.sha1(text.encode()).hexdigest()
        print(json.dumps({"ms": ms, "digest": digest, "body": text}), file=out)
        out.flush()
    if pool is not None:
        pool.shutdown()
    engine.close()
    return 0


def _parse_time(value: str) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(value)


# ----------------------------------------------------------------------------- driver


class _Worker:
    def __init__(self, checkout: Path, uri: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "worker", "--neo4j-uri", uri],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(checkout),
        )
        hello = json.loads(self._line())
        self.code = hello["code"]

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker exited with {self.proc.wait()}")
        return line

    def call(self, cmd: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return dict(json.loads(self._line()))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


def _questions(limit: int) -> list[tuple[str, Any]]:
    """(conversation id, question), spread over every conversation."""
    from benchmarks import locomo

    dataset, _ = locomo.load(None)
    per = [list(c.questions) for c in dataset.conversations]
    ids = [c.id for c in dataset.conversations]
    out: list[tuple[str, Any]] = []
    n = 0
    while len(out) < limit and any(n < len(qs) for qs in per):
        for cid, qs in zip(ids, per, strict=True):
            if n < len(qs) and len(out) < limit:
                out.append((cid, qs[n]))
        n += 1
    return out


def _commands(space: str, question: Any) -> list[tuple[str, dict[str, Any]]]:
    when = question.question_time.isoformat() if question.question_time else None
    cmds = []
    for name, fields, flat, ablate in VARIANTS:
        f = {"query": question.text, **fields}
        if f.pop("as_of", False):
            if when is None:
                continue
            f["as_of"] = when
        if when is not None:
            f["now"] = when
        cmds.append((name, {"space": space, "fields": f, "flat": flat, "ablate": ablate}))
    return cmds


def run(args: argparse.Namespace) -> int:
    spaces = json.loads(Path(args.spaces).read_text())
    uri = args.neo4j_uri or spaces["uri"]
    new = _Worker(Path(__file__).resolve().parents[1], uri)
    old = _Worker(Path(args.old).resolve(), uri)
    print(f"old: {old.code}\nnew: {new.code}", flush=True)
    questions = _questions(args.questions)
    plan = [(spaces["scale"], q) for _, q in questions]
    plan += [(spaces["single"], q) for cid, q in questions if cid == spaces["single_conversation"]]
    for space, q in plan[: args.warmup]:  # warm both: models, caches, projections
        for _, cmd in _commands(space, q)[:1]:
            old.call(cmd)
            new.call(cmd)
    load_start = os.getloadavg()
    times: dict[str, list[float]] = {"old": [], "new": []}
    same = different = 0
    diffs: list[dict[str, Any]] = []
    for n, (space, q) in enumerate(plan):
        for name, cmd in _commands(space, q):
            order = [("old", old), ("new", new)] if n % 2 == 0 else [("new", new), ("old", old)]
            got = {label: w.call(cmd) for label, w in order}
            if got["old"]["digest"] == got["new"]["digest"]:
                same += 1
            else:
                different += 1
                if len(diffs) < args.show:
                    diffs.append({"variant": name, "space": space, "question": q.id, **got})
            if name == TIMED and space == spaces["scale"]:
                for label in ("old", "new"):
                    times[label].append(got[label]["ms"])
        if (n + 1) % 25 == 0:
            print(f"{n + 1}/{len(plan)} questions; {different} different", flush=True)
    load_end = os.getloadavg()
    old.close()
    new.close()
    p50 = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "old_code": old.code,
        "new_code": new.code,
        "calls_compared": same + different,
        "identical": same,
        "different": different,
        "timed_variant": TIMED,
        "timed_calls": len(times["new"]),
        "p50_ms": p50,
        "ratio_new_over_old": p50["new"] / p50["old"],
        "loadavg_start": load_start,
        "loadavg_end": load_end,
    }
    print(json.dumps(result, indent=2))
    for d in diffs:
        print(f"DIFFERENT {d['variant']} {d['space']} {d['question']}")
        _print_diff(json.loads(d["old"]["body"]), json.loads(d["new"]["body"]))
    if args.out:
        Path(args.out).write_text(json.dumps({**result, "diffs": diffs}, indent=2))
    return 0 if different == 0 else 1


def _print_diff(a: Any, b: Any, path: str = "") -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                print(f"  {path}.{k}: only in {'old' if k in a else 'new'}")
            else:
                _print_diff(a[k], b[k], f"{path}.{k}")
    elif a != b:
        print(f"  {path}: {str(a)[:200]!r} != {str(b)[:200]!r}")


def ingest(args: argparse.Namespace) -> int:
    from benchmarks import locomo
    from benchmarks.instance import neo4j_for_bench, start_engine
    from benchmarks.mnemograph import MnemographSystem
    from benchmarks.runner import _unit_sessions

    dataset, _ = locomo.load(None)
    with neo4j_for_bench(args.neo4j_uri, keep=True) as neo:
        engine = start_engine(neo.uri, neo.auth)
        try:
            system = MnemographSystem(engine, progress=True)
            scale, single = "ab-scale", "ab-single"
            convs = list(dataset.conversations)
            system.prepare(scale, _unit_sessions(convs, True, True))
            system.prepare(single, _unit_sessions(convs[:1], False, True))
        finally:
            engine.close()
            build_schemas(engine, [scale, single])
        spaces = {
            "uri": neo.uri,
            "pid": neo.pid,
            "scale": scale,
            "single": single,
            "single_conversation": convs[0].id,
        }
    Path(args.out).write_text(json.dumps(spaces, indent=2))
    print(json.dumps(spaces))
    return 0


def build_schemas(engine: Any, space_ids: list[str]) -> None:
    """Every stage's schema summary in ``space_ids``, built now (what Phase 3 would build on
    demand), so that the database no longer changes under the calls compared."""
    from pipelines.consolidate.schemas import ensure_schemas

    for space in space_ids:
        stages = [r["id"] for r in engine.store.read("assemble/stages", space=space, as_of=None)]
        for start in range(0, len(stages), 50):
            ensure_schemas(engine, space, stages[start : start + 50])
        print(f"{space}: {len(stages)} stage schemas built", flush=True)


def schemas(args: argparse.Namespace) -> int:
    from benchmarks.instance import start_engine

    spaces = json.loads(Path(args.spaces).read_text())
    engine = start_engine(args.neo4j_uri or spaces["uri"])
    try:
        build_schemas(engine, [spaces["scale"], spaces["single"]])
    finally:
        engine.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.context_ab", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    i = sub.add_parser("ingest", help="LoCoMo into the benchmark Neo4j (kept running)")
    i.add_argument("--out", required=True)
    i.add_argument("--neo4j-uri", default=None)
    b = sub.add_parser("schemas", help="build every stage summary of the spaces")
    b.add_argument("--spaces", required=True)
    b.add_argument("--neo4j-uri", default=None)
    r = sub.add_parser("run", help="compare this checkout with --old on the same spaces")
    r.add_argument("--old", required=True)
    r.add_argument("--spaces", required=True)
    r.add_argument("--neo4j-uri", default=None)
    r.add_argument("--questions", type=int, default=300)
    r.add_argument("--warmup", type=int, default=10)
    r.add_argument("--show", type=int, default=5, help="differences to print")
    r.add_argument("--out", default=None)
    w = sub.add_parser("worker", help="(internal) serve assemble calls on stdin/stdout")
    w.add_argument("--neo4j-uri", required=True)
    args = p.parse_args(argv)
    if args.cmd == "worker":
        return _worker(args.neo4j_uri)
    commands = {"ingest": ingest, "schemas": schemas, "run": run}
    return commands[str(args.cmd)](args)


if __name__ == "__main__":
    sys.exit(main())

"""Run a consolidation job once from the command line.

    python -m pipelines.consolidate run <job> --space S [--dry-run | --apply] [--uri bolt://...]
    python -m pipelines.consolidate run all --space S [--dry-run]   # every job, with timings
    python -m pipelines.consolidate runs --space S [--job J]        # recent runs

Jobs: decay, merge, supersede, communities, schemas, upkeep, retention. ``retention`` is a dry
run unless ``--apply`` is given. Neo4j is found through MNEMOGRAPH_NEO4J_URI / _USER /
_PASSWORD / _DATABASE (or ``--uri``), like the server.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

from pydantic import BaseModel

from pipelines.consolidate.config import JOB_NAMES
from pipelines.consolidate.records import JobRun
from pipelines.consolidate.runner import Runner, list_runs, run_full_pass, run_job
from pipelines.engine import Engine, EngineSettings
from pipelines.errors import DomainError
from pipelines.graph import GraphConfig


def _engine(uri: str | None) -> Engine:
    env = os.environ
    graph = GraphConfig(
        uri=uri or env.get("MNEMOGRAPH_NEO4J_URI", GraphConfig.uri),
        user=env.get("MNEMOGRAPH_NEO4J_USER") or None,
        password=env.get("MNEMOGRAPH_NEO4J_PASSWORD") or None,
        database=env.get("MNEMOGRAPH_NEO4J_DATABASE", GraphConfig.database),
    )
    return Engine.start(
        EngineSettings(
            graph=graph,
            embedding_model_path=env.get("MNEMOGRAPH_EMBEDDING_MODEL_PATH") or None,
            query_encoder=env.get("MNEMOGRAPH_QUERY_ENCODER", "onnx"),
            document_encoder=env.get("MNEMOGRAPH_DOCUMENT_ENCODER", "onnx"),
            model_cache_dir=env.get("MNEMOGRAPH_MODEL_CACHE_DIR") or None,
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pipelines.consolidate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one job (or 'all') once")
    run.add_argument("job", choices=[*JOB_NAMES, "all"])
    run.add_argument("--space", required=True)
    mode = run.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="report what would change")
    mode.add_argument("--apply", action="store_true", help="make changes (retention)")
    run.add_argument("--uri", help="Neo4j Bolt URI (default: MNEMOGRAPH_NEO4J_URI)")
    runs = sub.add_parser("runs", help="list recent runs of a space")
    runs.add_argument("--space", required=True)
    runs.add_argument("--job", choices=JOB_NAMES)
    runs.add_argument("--limit", type=int, default=20)
    runs.add_argument("--uri")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s %(message)s")
    engine = _engine(args.uri)
    out: BaseModel | list[JobRun]
    try:
        if args.command == "runs":
            out = list_runs(engine, args.space, args.job, 0, args.limit)
        elif args.job == "all":
            out = run_full_pass(engine, args.space, dry_run=args.dry_run)
        else:
            dry = True if args.dry_run else (False if args.apply else None)
            out = run_job(engine, args.space, args.job, dry_run=dry, runner=Runner("cli"))
    except DomainError as exc:
        print(json.dumps({"error": {"code": exc.code, "message": exc.message}}), file=sys.stderr)
        return 2
    finally:
        engine.close()
    data = (
        [r.model_dump(mode="json") for r in out]
        if isinstance(out, list)
        else out.model_dump(mode="json")
    )
    print(json.dumps(data, indent=2))
    failed = isinstance(out, JobRun) and out.status == "failed"
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

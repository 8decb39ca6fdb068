"""Command line: ``python -m app serve`` (see ``--help``)."""

from __future__ import annotations

import argparse
import logging
import sys

import uvicorn

from app.main import create_app
from app.settings import Settings
from neo4j_runtime import runtime
from neo4j_runtime.__main__ import dev_instance


def serve(args: argparse.Namespace) -> int:
    settings = Settings()
    if args.host:
        settings.host = args.host
    if args.port:
        settings.port = args.port
    settings.check_bind()
    instance = None
    started_here = False
    if args.manage_neo4j or settings.manage_neo4j:
        instance = dev_instance()
        started = runtime.start(instance)
        started_here = not started.reused
        settings.neo4j_uri = instance.bolt_uri
        print(
            f"[mnemograph] Neo4j + GDS ready at {instance.bolt_uri} "
            f"({'reused' if started.reused else f'started in {started.seconds:.1f}s'})",
            flush=True,
        )
    try:
        print(
            f"[mnemograph] API on http://{settings.host}:{settings.port} "
            f"(docs at /docs); Ctrl-C stops everything",
            flush=True,
        )
        uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="info")
    finally:
        if instance is not None and started_here:
            runtime.stop(instance)
            print("[mnemograph] Neo4j stopped", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    parser = argparse.ArgumentParser(prog="mnemograph")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="run the API")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument(
        "--manage-neo4j",
        action="store_true",
        help="start the local Neo4j + GDS runtime too (stopped again on exit)",
    )
    p.set_defaults(func=serve)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())

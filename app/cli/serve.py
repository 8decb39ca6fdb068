"""``mnemograph serve`` and ``mnemograph neo4j start|stop|status``: the server side."""

from __future__ import annotations

import argparse
import json

import uvicorn

from app.main import create_app
from app.observability.middleware import json_logging
from app.settings import Settings
from neo4j_runtime import runtime
from neo4j_runtime.__main__ import api_base_url, describe, dev_instance, dev_login


def serve(args: argparse.Namespace) -> int:
    json_logging()
    settings = Settings()
    if args.host:
        settings.host = args.host
    if args.port:
        settings.port = args.port
    settings.check_bind()
    instance = None
    started_here = False
    if args.manage_neo4j or settings.manage_neo4j:
        instance = dev_instance(api_base_url(settings.host, settings.port))
        started = runtime.start(instance)
        started_here = not started.reused
        settings.neo4j_uri = instance.bolt_uri
        if instance.auth:  # the API connects with the password the runtime set
            settings.neo4j_user, settings.neo4j_password = instance.auth
        print(
            f"[mnemograph] Neo4j + GDS ready at {instance.bolt_uri} "
            f"({'reused' if started.reused else f'started in {started.seconds:.1f}s'})",
            flush=True,
        )
        for line in describe(instance):
            print(f"[mnemograph] {line}", flush=True)
    elif settings.neo4j_user is None and (login := dev_login(settings.neo4j_uri)):
        # the instance `make neo4j` started: log in with the password it generated
        settings.neo4j_user, settings.neo4j_password = login
    try:
        print(
            f"[mnemograph] API on http://{settings.host}:{settings.port} "
            f"(docs at /docs, MCP at /mcp, metrics at /metrics); Ctrl-C stops everything",
            flush=True,
        )
        uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_config=None)
    finally:
        if instance is not None and started_here:
            runtime.stop(instance)
            print("[mnemograph] Neo4j stopped", flush=True)
    return 0


def neo4j(args: argparse.Namespace) -> int:
    """The local Neo4j + GDS runtime (data under MNEMOGRAPH_NEO4J_DIR, port
    MNEMOGRAPH_NEO4J_PORT)."""
    inst = dev_instance()
    try:
        if args.action == "start":
            started = runtime.start(inst, timeout=args.timeout)
            how = "already running" if started.reused else f"started in {started.seconds:.1f}s"
            out = {"uri": inst.bolt_uri, "pid": started.pid, "status": how,
                   "data": str(inst.data_dir)}  # fmt: skip
        elif args.action == "stop":
            out = {
                "uri": inst.bolt_uri,
                "status": "stopped" if runtime.stop(inst) else "not running",
            }
        else:
            out = dict(runtime.status(inst))
    except runtime.RuntimeErrorWithHint as exc:
        return runtime.main_error(exc)
    if args.json:
        print(json.dumps(out, indent=2, default=str))
    else:
        for key, value in out.items():
            print(f"{key:>10}  {value}")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the API (and /mcp, /metrics)")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument(
        "--manage-neo4j",
        action="store_true",
        help="start the local Neo4j + GDS runtime too (stopped again on exit)",
    )
    p.set_defaults(func=serve)
    p = sub.add_parser("neo4j", help="the local Neo4j + GDS runtime")
    p.add_argument("action", choices=["start", "stop", "status"])
    p.add_argument("--timeout", type=float, default=180.0)
    p.set_defaults(func=neo4j)

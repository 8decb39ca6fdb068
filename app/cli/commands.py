"""Client commands (through the SDK, against a running server): spaces, recall, context,
jobs, and the MCP server over stdio."""

from __future__ import annotations

import argparse
import json
from typing import get_args

from app.cli.output import safe, show
from app.mcp import config, stdio
from app.schemas.jobs import JobName
from mnemograph.client import Client

JOBS = list(get_args(JobName))


def client(args: argparse.Namespace) -> Client:
    return Client(args.url, args.api_key)


def spaces(args: argparse.Namespace) -> int:
    with client(args) as mg:
        if args.action == "list":
            found = list(mg.iter_spaces())
            show(found, args.json, ["id", "name", "description", "created_at"])
        elif args.action == "create":
            show(mg.create_space(args.space, name=args.name, description=args.description),
                 args.json)  # fmt: skip
        elif args.action == "update":
            settings = json.loads(args.settings) if args.settings else None
            show(mg.update_space(args.space, name=args.name, description=args.description,
                                 settings=settings), args.json)  # fmt: skip
        else:
            show(mg.delete_space(args.space), args.json)
    return 0


def recall(args: argparse.Namespace) -> int:
    with client(args) as mg:
        out = mg.recall(args.space, args.query, k=args.k, preset=args.preset)
    if args.json:
        show(out, True)
        return 0
    rows = [{"score": f"{h.score:.3f}", "id": h.id, "time": h.time, "speaker": h.speaker,
             "content": h.content} for h in out.results]  # fmt: skip
    show(rows, False, ["score", "id", "time", "speaker", "content"])
    if out.abstain:
        print(safe(f"(weak evidence: {out.abstain_reason})"))
    return 0


def context(args: argparse.Namespace) -> int:
    with client(args) as mg:
        out = mg.context(args.space, args.query, args.tokens)
    if args.json:
        show(out, True)
    else:
        print(safe(out.prompt))
    return 0


def jobs(args: argparse.Namespace) -> int:
    with client(args) as mg:
        if args.action == "run":
            if not args.job:
                raise SystemExit("jobs run: name the job (" + ", ".join(JOBS) + ")")
            dry = True if args.dry_run else None
            show(mg.run_job(args.space, args.job, dry_run=dry), args.json)
        else:
            runs = list(mg.iter_jobs(args.space, args.job))
            show(runs, args.json, ["id", "job", "status", "dry_run", "started_at", "duration_ms"])
    return 0


def mcp(args: argparse.Namespace) -> int:
    if args.print_config:
        print(config.snippet(args.space, args.api_key))
        return 0
    return stdio.run(args.url, args.api_key, args.space, args.backend)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("spaces", help="list, create, update or delete spaces")
    p.add_argument("action", choices=["list", "create", "update", "delete"])
    p.add_argument("space", nargs="?", help="space id (create, update, delete)")
    p.add_argument("--name")
    p.add_argument("--description")
    p.add_argument("--settings", help="update: a JSON merge patch, e.g. '{\"gate\": null}'")
    p.set_defaults(func=spaces, needs_space=("create", "update", "delete"))
    p = sub.add_parser("recall", help="memories that answer a query")
    p.add_argument("query")
    p.add_argument("--space", required=True)
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--preset", choices=["full", "fast", "dense"])
    p.set_defaults(func=recall)
    p = sub.add_parser("context", help="the assembled context for a query")
    p.add_argument("query")
    p.add_argument("--space", required=True)
    p.add_argument("--tokens", type=int, default=4000, help="context window (tokens)")
    p.set_defaults(func=context)
    p = sub.add_parser("jobs", help="run a consolidation job or list runs")
    p.add_argument("action", choices=["run", "list"])
    p.add_argument("job", nargs="?", choices=JOBS)
    p.add_argument("--space", required=True)
    p.add_argument("--dry-run", action="store_true")
    p.set_defaults(func=jobs)
    p = sub.add_parser("mcp", help="serve the MCP tools over stdio (for desktop agents)")
    p.add_argument("--space", help="default space of the tools (created if missing)")
    p.add_argument(
        "--backend",
        choices=["auto", "api", "local"],
        default="auto",
        help="auto: the API at --url if it answers, else the engine in this process (starting "
        "the local Neo4j if needed); api: only the API; local: only the engine in-process",
    )
    p.add_argument(
        "--print-config",
        action="store_true",
        help="print the Claude Desktop / Cursor config entry (absolute command) and exit",
    )
    p.set_defaults(func=mcp)

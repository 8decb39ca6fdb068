"""The ``mnemograph`` command line. Server side: ``serve``, ``neo4j start|stop|status``.
Client side, against a running server (``--url``/``MNEMOGRAPH_URL``, ``--api-key``/
``MNEMOGRAPH_API_KEY``): ``spaces``, ``ingest``, ``recall``, ``context``, ``jobs``,
``export``, ``import``, and ``mcp`` (the MCP tools over stdio). Tables by default, ``--json``
for scripts."""

from __future__ import annotations

import argparse
import logging
import sys

from app.cli import commands, ingest, serve, transfer
from app.cli.output import safe
from mnemograph.client import MnemographError


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--url", help="server URL (default: $MNEMOGRAPH_URL or http://127.0.0.1:8000)"
    )
    common.add_argument("--api-key", help="bearer key (default: $MNEMOGRAPH_API_KEY)")
    common.add_argument("--json", action="store_true", help="print JSON instead of tables")
    top = argparse.ArgumentParser(prog="mnemograph", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    original = sub.add_parser

    def add_parser(name: str, **kwargs: object) -> argparse.ArgumentParser:
        return original(name, parents=[common], **kwargs)  # type: ignore[arg-type]

    sub.add_parser = add_parser  # type: ignore[method-assign]
    for module in (serve, commands, ingest, transfer):
        module.register(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    for noisy in ("httpx", "httpcore"):  # a line per request would print over the progress bar
        logging.getLogger(noisy).setLevel(logging.WARNING)
    args = parser().parse_args(argv)
    needs = getattr(args, "needs_space", ())
    if getattr(args, "action", None) in needs and not getattr(args, "space", None):
        raise SystemExit(f"{args.command} {args.action}: name the space")
    try:
        return int(args.func(args))
    except MnemographError as exc:
        where = f" (field: {exc.field})" if exc.field else ""
        print(safe(f"error: {exc.code}{where}: {exc.message}"), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

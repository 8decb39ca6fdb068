"""``mnemograph ingest FILE``: conversations into a space, with a progress bar.

FILE is either the generic benchmark format (one JSON document: ``conversations`` ->
``sessions`` -> ``turns``; questions and other gold fields are ignored) or JSON Lines of
messages (``{"role", "content", "speaker"?, "time"?, "session"?, "id"?}``, one per line;
consecutive lines with the same ``session`` form one session).

Any size goes in: the import is split into requests within the server's limits
(``GET /v1/limits``; :mod:`mnemograph.client.bulk`), a long session sent in parts with its
``session_id``. Turns without ids get stable ones (``<session>#<position>``), so running the
same import again stores nothing twice; ``--resume FILE`` also skips the requests a previous,
interrupted run had acknowledged."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tqdm import tqdm

from app.cli.output import show
from mnemograph.client import Client
from mnemograph.client.bulk import Resume

TURN_FIELDS = ("id", "role", "speaker", "content", "time")


def _generic(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for conv in doc.get("conversations", []):
        for s in conv.get("sessions", []):
            yield {
                "session_id": f"{conv['id']}:{s['id']}"
                if len(doc["conversations"]) > 1
                else s["id"],
                "started_at": s.get("started_at"),
                "stage": s.get("stage"),
                "turns": [
                    {k: t[k] for k in TURN_FIELDS if t.get(k) is not None} for t in s["turns"]
                ],
            }


def _messages(lines: list[str], default_session: str) -> Iterator[dict[str, Any]]:
    current: str | None = None
    turns: list[dict[str, Any]] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"line {n}: not JSON ({exc})") from None
        session = str(msg.get("session") or default_session)
        if current is not None and session != current and turns:
            yield {"session_id": current, "turns": turns}
            turns = []
        current = session
        turns.append({k: msg[k] for k in TURN_FIELDS if msg.get(k) is not None})
    if current is not None and turns:
        yield {"session_id": current, "turns": turns}


def sessions_of(path: Path) -> list[dict[str, Any]]:
    """The sessions a file holds, in file order (either format)."""
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            doc = None
        if isinstance(doc, dict) and "conversations" in doc:
            return list(_generic(doc))
    return list(_messages(text.splitlines(), path.stem))


def ingest(args: argparse.Namespace) -> int:
    sessions = sessions_of(Path(args.file))
    turns = sum(len(s["turns"]) for s in sessions)
    resume = Resume.open(args.resume) if args.resume else None
    with Client(args.url, args.api_key, timeout=args.timeout) as mg:
        mg.create_space(args.space)
        with tqdm(total=turns, unit="turn", disable=args.quiet, file=sys.stderr) as bar:
            out = mg.ingest_sessions(args.space, sessions, resume=resume, progress=bar.update)
    summary = {"space": args.space, "sessions": len(sessions), "turns": turns,
               "requests": out.requests, "skipped_requests": out.skipped,
               **out.decisions, **out.counts}  # fmt: skip
    show(summary, args.json)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("ingest", help="store conversations from a file")
    p.add_argument("file", help="generic benchmark JSON, or JSON Lines of messages")
    p.add_argument("--space", required=True, help="target space (created if missing)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--resume",
        metavar="STATE",
        help="state file: skip the requests a previous run acknowledged, record new ones",
    )
    p.add_argument(
        "--timeout", type=float, default=900.0, help="seconds to wait for one request (900)"
    )
    p.set_defaults(func=ingest)

"""``mnemograph ingest FILE``: conversations into a space, with a progress bar.

FILE is either the generic benchmark format (one JSON document: ``conversations`` ->
``sessions`` -> ``turns``; questions and other gold fields are ignored) or JSON Lines of
messages (``{"role", "content", "speaker"?, "time"?, "session"?, "id"?}``, one per line;
consecutive lines with the same ``session`` form one session)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tqdm import tqdm

from app.cli.commands import client
from app.cli.output import show

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
    totals: dict[str, int] = {}
    turns = sum(len(s["turns"]) for s in sessions)
    with client(args) as mg, tqdm(total=turns, unit="turn", disable=args.quiet) as bar:
        mg.create_space(args.space)
        for session in sessions:
            out = mg.add_session(args.space, session)
            for key, value in out.counts.items():
                totals[key] = totals.get(key, 0) + value
            bar.update(len(session["turns"]))
    show({"space": args.space, "sessions": len(sessions), "turns": turns, **totals}, args.json)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("ingest", help="store conversations from a file")
    p.add_argument("file", help="generic benchmark JSON, or JSON Lines of messages")
    p.add_argument("--space", required=True, help="target space (created if missing)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=ingest)

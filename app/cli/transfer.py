"""``mnemograph export`` / ``mnemograph import``: a space as JSON Lines (backup, restore,
moving between servers). An import is idempotent and checked against the export's counts."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tqdm import tqdm

from app.cli.commands import client
from app.cli.output import show
from mnemograph.client.transfer import counts_record, mismatches


def export(args: argparse.Namespace) -> int:
    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout  # noqa: SIM115
    n = 0
    try:
        with client(args) as mg:
            for record in tqdm(mg.export(args.space, args.embeddings), unit="rec",
                               disable=args.quiet or not args.out):  # fmt: skip
                out.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n")
                n += 1
                if record["type"] == "counts" and args.out:
                    summary = {"space": args.space, "records": n, "file": args.out, **record}
    finally:
        if args.out:
            out.close()
    if args.out:
        show(summary, args.json)
    return 0


def _records(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise SystemExit(f"{path}:{n}: not JSON ({exc})") from None


def import_(args: argparse.Namespace) -> int:
    path = Path(args.file)
    header = next(_records(path), {})
    if header.get("type") != "header":
        raise SystemExit(f"{path}: not a Mnemograph export (no header record)")
    expected = counts_record(_records(path))
    if expected is None:
        raise SystemExit(f"{path}: the export is incomplete (no counts record at the end)")
    space = args.space or header["space"]
    total = sum(1 for _ in _records(path))
    with client(args) as mg:
        records = tqdm(_records(path), total=total, unit="rec", disable=args.quiet)
        written = mg.import_records(space, records, batch=args.batch)
        problems = mismatches(expected, mg.transfer_counts(space))
    show({"space": space, "nodes": written.nodes, "relationships": written.relationships,
          "verified": not problems, "mismatches": problems}, args.json)  # fmt: skip
    return 1 if problems else 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="write a space as JSON Lines")
    p.add_argument("--space", required=True)
    p.add_argument("--out", "-o", help="file (default: stdout)")
    p.add_argument("--embeddings", action="store_true", help="include embeddings (exact, larger)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=export)
    p = sub.add_parser("import", help="load an export into a space (idempotent, verified)")
    p.add_argument("file")
    p.add_argument("--space", help="target space (default: the exported space's id)")
    p.add_argument("--batch", type=int, default=500, help="records per transaction")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=import_)

"""Precision of standing-statement extraction on labelled samples (LoCoMo and BEAM-100K).

The extractor (:func:`pipelines.ingest.standing.extract_standing`) runs directly on the
datasets' turns, exactly as ingest calls it (the turn's role, ``FactConfig.user_roles``).

LoCoMo's two speakers are both people: every LoCoMo turn is read as a user turn (as a REST
client ingesting a conversation between two people would send it; the benchmark's own mapping
makes ``speaker_b`` the assistant, which would hide half of the people's statements).

BEAM-1M (``/work/shared/datasets/beam/1M``, the nine conversations there) is data the extraction
rules were not written against: the v2 sample draws from it as well.

* ``sample``: draw ``--per-dataset`` statements per dataset with ``random.Random(--seed)`` from
  everything the current code extracts (sorted by dataset, conversation, turn, span first) and
  write them, WITH their turns' text, to a file outside the repository for labelling by reading.
* ``score``: read a committed label file (``benchmarks/labels/standing-v*.jsonl``: dataset,
  conversation, turn id, statement span, sha256 of the normalised statement, label; never the
  datasets' text) and report its precision as labelled and re-scored with the current code: a
  labelled statement still counts when the current code extracts a statement overlapping its span
  in the same turn; precision is the share of ``ok`` among those kept.

Run: ``python -m benchmarks.standing_precision score benchmarks/labels/standing-v1.jsonl``.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import random
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import beam, locomo
from benchmarks.format import Dataset
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG
from pipelines.ingest.standing import extract_standing
from pipelines.ingest.text import normalise_for_match, split_sentences, strip_code_blocks
from pipelines.models.nlp import load_nlp

DATASETS = ("locomo", "beam-100k", "beam-1m")
BEAM_1M = Path("/work/shared/datasets/beam/1M")


@dataclass(frozen=True)
class Found:
    dataset: str
    conversation: str
    turn: str
    start: int
    end: int
    category: str
    text: str
    content: str

    @property
    def sha256(self) -> str:
        return statement_hash(self.text)


def statement_hash(text: str) -> str:
    """sha256 of the normalised statement (:func:`normalise_for_match`)."""
    return hashlib.sha256(normalise_for_match(text).encode("utf-8")).hexdigest()


@functools.cache
def _nlp() -> Any:
    return load_nlp()[0]


def _load(name: str) -> Dataset:
    if name == "locomo":
        return locomo.load()[0]
    return beam.load(BEAM_1M, "beam-1m")[0] if name == "beam-1m" else beam.load()[0]


def locate(statement: str, content: str) -> tuple[int, int]:
    """Character span of ``statement`` in ``content`` (whitespace- and case-insensitive), or the
    span of the turn's first sentence sharing its first three words; (-1, -1) if neither."""
    words = [re.escape(w) for w in statement.split()]
    m = re.search(r"\s+".join(words), content, re.IGNORECASE)
    if m is None and len(words) > 3:
        m = re.search(r"\s+".join(words[:3]), content, re.IGNORECASE)
    return (m.start(), m.end()) if m else (-1, -1)


def extracted(dataset: Dataset, name: str) -> Iterator[Found]:
    """Every standing statement the current extractor finds in ``dataset``."""
    roles = DEFAULT_INGEST_CONFIG.facts.user_roles
    nlp = _nlp()
    for conv in dataset.conversations:
        for session in conv.sessions:
            for turn in session.turns:
                role = "user" if name == "locomo" else turn.role
                for s in extract_standing(turn.content, role, roles, nlp):
                    start, end = locate(s.text, turn.content)
                    yield Found(
                        name, conv.id, turn.id, start, end, s.category, s.text, turn.content
                    )


def _sentence_of(found: Found) -> str:
    for sentence in split_sentences(strip_code_blocks(found.content)):
        if normalise_for_match(found.text)[:40] in normalise_for_match(sentence):
            return sentence
    return ""


def sample(per_dataset: int, seed: int, out: Path, datasets: list[str]) -> None:
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for name in datasets:
        population = sorted(
            extracted(_load(name), name), key=lambda f: (f.conversation, f.turn, f.start)
        )
        picked = rng.sample(population, min(per_dataset, len(population)))
        print(f"{name}: {len(population)} statements, {len(picked)} sampled", file=sys.stderr)
        for f in sorted(picked, key=lambda f: (f.conversation, f.turn, f.start)):
            rows.append(
                {
                    "dataset": name,
                    "conversation": f.conversation,
                    "turn": f.turn,
                    "span": [f.start, f.end],
                    "category": f.category,
                    "sha256": f.sha256,
                    "label": None,
                    # private, for labelling only: never committed
                    "statement": f.text,
                    "sentence": _sentence_of(f),
                    "turn_text": f.content[:1500],
                }
            )
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def _current(name: str) -> dict[tuple[str, str], list[Found]]:
    by_turn: dict[tuple[str, str], list[Found]] = {}
    for f in extracted(_load(name), name):
        by_turn.setdefault((f.conversation, f.turn), []).append(f)
    return by_turn


def _kept(label: dict[str, Any], current: list[Found]) -> bool:
    start, end = label["span"]
    for f in current:
        if f.sha256 == label["sha256"]:
            return True
        if start >= 0 and f.start >= 0 and f.start < end and start < f.end:
            return True
    return False


def score(path: Path) -> dict[str, Any]:
    labels = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    report: dict[str, Any] = {"labels": str(path)}
    for name in (*DATASETS, "all"):
        rows = [r for r in labels if name in ("all", r["dataset"])]
        if not rows:
            continue
        report[name] = {"n": len(rows), "ok": sum(r["label"] == "ok" for r in rows)}
    current = {name: _current(name) for name in {r["dataset"] for r in labels}}
    kept = [
        r for r in labels if _kept(r, current[r["dataset"]].get((r["conversation"], r["turn"]), []))
    ]
    for name in (*DATASETS, "all"):
        if name not in report:
            continue
        rows = [r for r in labels if name in ("all", r["dataset"])]
        k = [r for r in kept if name in ("all", r["dataset"])]
        ok = report[name]["ok"]
        k_ok = sum(r["label"] == "ok" for r in k)
        report[name].update(
            {
                "precision_as_labelled": round(ok / len(rows), 3),
                "kept": len(k),
                "kept_ok": k_ok,
                "precision_current": round(k_ok / len(k), 3) if k else None,
                "ok_kept_share": round(k_ok / ok, 3) if ok else None,
            }
        )
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("sample", help="draw a sample to label (writes dataset text: keep it out)")
    p.add_argument("--per-dataset", type=int, default=100)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS[:2]))
    s = sub.add_parser("score", help="precision of a committed label file")
    s.add_argument("labels", type=Path)
    args = parser.parse_args(argv)
    if args.command == "sample":
        sample(args.per_dataset, args.seed, args.out, args.datasets)
    else:
        print(json.dumps(score(args.labels), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

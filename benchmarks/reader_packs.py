"""Blinding for the reader-judged benchmark: random labels, batches, the packs and the key.

A **reader pack** (``reader-NN.jsonl``) holds one JSON object per line with exactly
``label``, ``question`` and ``prompt``: nothing names the condition, the question's id, its
conversation, its category or any gold field. A batch never holds two prompts of the same
question (a reader given both could answer one from the other), and its lines are shuffled.
The **key** (``key.json``, kept apart from the packs) maps every label to its question id,
conversation, ability, condition and budget. A **grader pack** (``grader-NN.jsonl``) holds
``label``, ``question``, ``answer``, ``gold_answer``, ``nuggets`` and ``abstention``; the
condition stays in the key.
"""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.reader_gold import GoldAnswer

READER_FIELDS: tuple[str, ...] = ("label", "question", "prompt")
GRADER_FIELDS: tuple[str, ...] = (
    "label",
    "question",
    "answer",
    "gold_answer",
    "nuggets",
    "abstention",
)
KEY_VERSION = 1


class PackError(ValueError):
    """An answers or grades file that does not match the key (the message says how)."""


@dataclass(frozen=True)
class Keyed:
    """What the key says about one label."""

    question_id: str
    conversation: str
    category: str
    condition: str
    budget: int
    space: str
    question: str
    prompt_chars: int


def new_labels(n: int, rng: random.Random) -> list[str]:
    """``n`` distinct random labels of 8 hex characters."""
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        label = f"{rng.getrandbits(32):08x}"
        if label not in seen:
            seen.add(label)
            out.append(label)
    return out


def batches(
    labels: Sequence[str], group_of: Mapping[str, str], size: int, rng: random.Random
) -> list[list[str]]:
    """``labels`` in batches of about ``size``, no two labels of one group (question) in a
    batch, each batch shuffled. Groups are placed in random order, each member into one of
    the emptiest batches that lack the group."""
    if size < 1:
        raise ValueError("batch size must be at least 1")
    groups: dict[str, list[str]] = defaultdict(list)
    for label in labels:
        groups[group_of[label]].append(label)
    widest = max((len(m) for m in groups.values()), default=0)
    count = max(widest, math.ceil(len(labels) / size)) if labels else 0
    out: list[list[str]] = [[] for _ in range(count)]
    order = list(groups)
    rng.shuffle(order)
    for g in order:
        members = list(groups[g])
        rng.shuffle(members)
        free = list(range(count))
        rng.shuffle(free)
        free.sort(key=lambda b: len(out[b]))  # stable: random among the equally empty
        for label, b in zip(members, free, strict=False):
            out[b].append(label)
    for b in out:
        rng.shuffle(b)
    return [b for b in out if b]


def pack_name(kind: str, index: int, total: int) -> str:
    return f"{kind}-{index + 1:0{max(2, len(str(total)))}d}.jsonl"


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_jsonl(paths: Iterable[Path]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PackError(f"{path}:{n}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict) or not isinstance(row.get("label"), str):
                raise PackError(f"{path}:{n}: expected an object with a string 'label'")
            rows.append(row)
    return rows


def jsonl_files(folder: Path) -> list[Path]:
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise PackError(f"no .jsonl files in {folder}")
    return files


def write_reader_packs(
    entries: Mapping[str, tuple[Keyed, str]],
    packs_dir: Path,
    key_path: Path,
    size: int,
    rng: random.Random,
    meta: Mapping[str, Any],
) -> list[Path]:
    """The reader packs of ``entries`` (label -> (what the key says, prompt)) and the key."""
    if key_path.resolve().parent == packs_dir.resolve():
        raise ValueError("the key must not sit in the packs' folder")
    labels = list(entries)
    grouped = batches(labels, {k: entries[k][0].question_id for k in labels}, size, rng)
    files = []
    for i, batch in enumerate(grouped):
        path = packs_dir / pack_name("reader", i, len(grouped))
        rows = [
            {"label": k, "question": entries[k][0].question, "prompt": entries[k][1]} for k in batch
        ]
        write_jsonl(path, rows)
        files.append(path)
    key = {
        "version": KEY_VERSION,
        **meta,
        "packs": [p.name for p in files],
        "labels": {k: asdict(entries[k][0]) for k in labels},
    }
    key_path.parent.mkdir(parents=True, exist_ok=True)
    key_path.write_text(json.dumps(key, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return files


def read_key(path: Path) -> tuple[dict[str, Any], dict[str, Keyed]]:
    """The key's metadata and its labels."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    if raw.get("version") != KEY_VERSION:
        raise PackError(f"{path}: unknown key version {raw.get('version')!r}")
    labels = {k: Keyed(**v) for k, v in raw["labels"].items()}
    return {k: v for k, v in raw.items() if k != "labels"}, labels


def by_label(
    rows: Sequence[Mapping[str, Any]], key: Mapping[str, Keyed], what: str
) -> dict[str, Mapping[str, Any]]:
    """``rows`` by label: every label in the key, at most once (PackError otherwise)."""
    out: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        label = str(row["label"])
        if label not in key:
            raise PackError(f"{what}: label {label!r} is not in the key")
        if label in out:
            raise PackError(f"{what}: label {label!r} appears twice")
        out[label] = row
    return out


def grader_rows(
    key: Mapping[str, Keyed],
    answers: Mapping[str, Mapping[str, Any]],
    gold: Mapping[str, GoldAnswer],
) -> dict[str, dict[str, Any]]:
    """label -> grader pack row for every answered label."""
    out = {}
    for label, row in answers.items():
        k = key[label]
        g = gold.get(k.question_id)
        if g is None:
            raise PackError(f"question {k.question_id!r} of label {label} is not in the dataset")
        if not g.nuggets:
            raise PackError(f"question {k.question_id!r} has neither rubric nor gold answer")
        out[label] = {
            "label": label,
            "question": k.question,
            "answer": str(row.get("answer") or ""),
            "gold_answer": g.answer,
            "nuggets": list(g.nuggets),
            "abstention": g.abstention,
        }
    return out


def write_grader_packs(
    rows: Mapping[str, Mapping[str, Any]],
    key: Mapping[str, Keyed],
    out_dir: Path,
    size: int,
    rng: random.Random,
) -> list[Path]:
    grouped = batches(list(rows), {k: key[k].question_id for k in rows}, size, rng)
    files = []
    for i, batch in enumerate(grouped):
        path = out_dir / pack_name("grader", i, len(grouped))
        write_jsonl(path, [{f: rows[k][f] for f in GRADER_FIELDS} for k in batch])
        files.append(path)
    return files

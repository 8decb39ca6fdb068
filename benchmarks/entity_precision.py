"""Entity precision on labelled samples: the share of the system's entities that a person keeps.

``python -m benchmarks.entity_precision score`` re-reads the datasets (LoCoMo, BEAM-100K),
runs the entity extractor over every conversation the way ingest does (the groups of whole
sessions the write path analyses together, the speakers' names given), keeps what would
become a graph entity (the promotion rule of :mod:`pipelines.ingest.entity_graph`: a
first-sighting kind, or seen in ``promote_at`` messages of the conversation) and scores it
against the labels in ``benchmarks/labels``.

Label files (``entities-v1.jsonl``: drawn from main's output; ``entities-v2.jsonl``: drawn
from the new code's output with another seed) hold no dataset text: dataset, conversation id,
turn id, the character span of the entity's first mention in the turn, the sha256 of its
canonical key and the label (``ok`` / ``junk``). For one file:

* ``precision``: among the system's entities on the file's labelled turns whose key hash is
  labelled, the share labelled ``ok``;
* ``unlabelled``: the system's entities on those turns that the file does not label (new
  outputs; drawn and labelled in the next file), reported, never counted as correct;
* ``ok_kept``: the share of ``ok`` labels the system still extracts (what filtering lost).

``python -m benchmarks.entity_precision draw --seed N --out FILE`` writes a labelling sheet
(with the text, so outside the repository): ``per_dataset`` entities drawn uniformly from all
(turn, entity) pairs of each dataset (of its first ``--conversations`` conversations), with
``random.Random(seed)``.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import random
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import beam, locomo
from benchmarks.format import Conversation

LABELS = Path(__file__).resolve().parent / "labels"
DATASETS = {
    "locomo": "/work/shared/datasets/locomo/locomo10.json",
    "beam-100k": "/work/shared/datasets/beam/100K",
}
BATCH_TURNS = 2000  # the benchmark ingests whole sessions in batches of up to this many turns


@dataclass(frozen=True, slots=True)
class Found:
    """One entity of one turn, as the system would store it."""

    dataset: str
    conversation: str
    turn: str
    name: str
    key: str
    kind: str
    start: int
    end: int

    @property
    def digest(self) -> str:
        return key_digest(self.key)


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def conversations(dataset: str, limit: int | None = None) -> tuple[Conversation, ...]:
    """The dataset's conversations (the first ``limit`` when given)."""
    source = DATASETS[dataset]
    if dataset == "locomo":
        convs = locomo.load(source)[0].conversations
    else:
        convs = beam.load(source)[0].conversations
    return convs[:limit] if limit else convs


def _span(text: str, name: str) -> tuple[int, int]:
    """The first mention of ``name`` in ``text``: as a whole word if it is one, else anywhere
    (case-insensitive last); ``(-1, -1)`` when the cleaned name is not in the text."""
    whole = re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text)
    if whole is not None:
        return whole.span()
    at = text.find(name)
    if at < 0:
        at = text.casefold().find(name.casefold())
    return (at, at + len(name)) if at >= 0 else (-1, -1)


def _batches(conv: Conversation, group_turns: int) -> Iterator[list[Any]]:
    """The turns ingest analyses together: the harness's requests (whole sessions, at most
    ``BATCH_TURNS`` turns), cut by the write path into groups of whole sessions of at least
    ``group_turns`` turns (``IngestConfig.group_turns``; the last may hold fewer)."""
    request: list[list[Any]] = []
    size = 0
    requests: list[list[list[Any]]] = []
    for session in conv.sessions:
        if request and size + len(session.turns) > BATCH_TURNS:
            requests.append(request)
            request, size = [], 0
        request.append(list(session.turns))
        size += len(session.turns)
    if request:
        requests.append(request)
    for sessions in requests:
        group: list[Any] = []
        for turns in sessions:
            group.extend(turns)
            if len(group) >= group_turns:
                yield group
                group = []
        if group:
            yield group


def extract(
    dataset: str,
    conv: Conversation,
    extractor: Any,
    promote_at: int,
    first_sighting: frozenset[str],
    group_turns: int,
) -> list[Found]:
    """The conversation's graph entities per turn (module docstring)."""
    takes_speakers = "speakers" in inspect.signature(extractor.extract_batch).parameters
    rows: list[tuple[Any, Any]] = []
    for batch in _batches(conv, group_turns):
        texts = [t.content for t in batch]
        if takes_speakers:
            found = extractor.extract_batch(texts, speakers=[t.speaker for t in batch])
        else:
            found = extractor.extract_batch(texts)
        rows.extend(zip(batch, found, strict=True))
    turns_of: dict[str, int] = {}
    kept_kind: set[str] = set()
    for _, mentions in rows:
        for m in mentions:
            turns_of[m.key] = turns_of.get(m.key, 0) + 1
            if m.kind in first_sighting:
                kept_kind.add(m.key)
    out = []
    for turn, mentions in rows:
        for m in mentions:
            if m.key in kept_kind or turns_of[m.key] >= promote_at:
                start, end = _span(turn.content, m.name)
                out.append(Found(dataset, conv.id, turn.id, m.name, m.key, m.kind, start, end))
    return out


def system_entities(
    datasets: Sequence[str], only: set[tuple[str, str]] | None = None, limit: int | None = None
) -> tuple[list[Found], dict[tuple[str, str, str], str]]:
    """Every graph entity of the datasets (of the conversations in ``only`` when given), and
    the text of every turn (for the labelling sheet)."""
    from pipelines.ingest.config import DEFAULT_INGEST_CONFIG
    from pipelines.ingest.extractor import EntityExtractor
    from pipelines.models.nlp import load_nlp

    cfg = DEFAULT_INGEST_CONFIG.entities
    group_turns = DEFAULT_INGEST_CONFIG.group_turns
    nlp, _ = load_nlp()
    extractor = EntityExtractor(nlp, cfg)
    found: list[Found] = []
    texts: dict[tuple[str, str, str], str] = {}
    for dataset in datasets:
        for conv in conversations(dataset, limit):
            if only is not None and (dataset, conv.id) not in only:
                continue
            for s in conv.sessions:
                for t in s.turns:
                    texts[(dataset, conv.id, t.id)] = t.content
            found.extend(
                extract(
                    dataset,
                    conv,
                    extractor,
                    cfg.promote_at,
                    cfg.first_sighting_labels,
                    group_turns,
                )
            )
    return found, texts


def read_labels(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def score(labels: Sequence[dict[str, Any]], found: Sequence[Found]) -> dict[str, Any]:
    """Precision of ``found`` on the labelled turns (module docstring), per dataset and all."""
    out: dict[str, Any] = {}
    for dataset in [*sorted({lab["dataset"] for lab in labels}), "all"]:
        labs = [lab for lab in labels if dataset in ("all", lab["dataset"])]
        by_turn = {(lab["dataset"], lab["conversation"], lab["turn"]) for lab in labs}
        label_of = {
            (lab["dataset"], lab["conversation"], lab["turn"], lab["sha256"]): lab["label"]
            for lab in labs
        }
        system = {
            (f.dataset, f.conversation, f.turn, f.digest)
            for f in found
            if (f.dataset, f.conversation, f.turn) in by_turn
        }
        judged = [label_of[k] for k in system if k in label_of]
        ok = judged.count("ok")
        ok_labels = [k for k, v in label_of.items() if v == "ok"]
        out[dataset] = {
            "labels": len(labs),
            "system_entities": len(system),
            "judged": len(judged),
            "ok": ok,
            "junk": len(judged) - ok,
            "precision": round(ok / len(judged), 4) if judged else None,
            "unlabelled": len(system) - len(judged),
            "ok_kept": round(sum(k in system for k in ok_labels) / len(ok_labels), 4)
            if ok_labels
            else None,
        }
    return out


def draw(
    found: Sequence[Found],
    texts: dict[tuple[str, str, str], str],
    seed: int,
    per_dataset: int,
    exclude: set[tuple[str, str, str, str]],
) -> list[dict[str, Any]]:
    """A labelling sheet: ``per_dataset`` (turn, entity) pairs per dataset, uniformly drawn
    with ``random.Random(seed)`` from those not in ``exclude``; with the text, for reading."""
    rng = random.Random(seed)
    sheet = []
    for dataset in sorted({f.dataset for f in found}):
        pool = sorted(
            {
                (f.conversation, f.turn, f.key): f
                for f in found
                if f.dataset == dataset
                and (f.dataset, f.conversation, f.turn, f.digest) not in exclude
            }.values(),
            key=lambda f: (f.conversation, f.turn, f.key),
        )
        for f in rng.sample(pool, min(per_dataset, len(pool))):
            text = texts[(f.dataset, f.conversation, f.turn)]
            a, b = max(0, f.start - 160), f.end + 160
            sheet.append(
                {
                    "dataset": f.dataset,
                    "conversation": f.conversation,
                    "turn": f.turn,
                    "span": [f.start, f.end],
                    "sha256": f.digest,
                    "kind": f.kind,
                    "name": f.name,
                    "context": text[a : f.start]
                    + "[["
                    + text[f.start : f.end]
                    + "]]"
                    + text[f.end : b],
                    "label": None,
                }
            )
    return sheet


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.entity_precision")
    sub = parser.add_subparsers(dest="command", required=True)
    sc = sub.add_parser("score", help="precision on the committed label files")
    sc.add_argument("--labels", nargs="*", default=None, help="label files (default: all)")
    sc.add_argument("--out", default=None, help="also write the result as JSON here")
    dr = sub.add_parser("draw", help="write a labelling sheet (holds dataset text)")
    dr.add_argument("--seed", type=int, required=True)
    dr.add_argument("--per-dataset", type=int, default=100)
    dr.add_argument("--conversations", type=int, default=None, help="the first N of each")
    dr.add_argument("--exclude", nargs="*", default=[], help="label files not to draw again")
    dr.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    datasets = sorted(DATASETS)
    if args.command == "draw":
        found, texts = system_entities(datasets, limit=args.conversations)
        exclude = {
            (lab["dataset"], lab["conversation"], lab["turn"], lab["sha256"])
            for path in args.exclude
            for lab in read_labels(Path(path))
        }
        sheet = draw(found, texts, args.seed, args.per_dataset, exclude)
        with open(args.out, "w", encoding="utf-8") as fh:
            for row in sheet:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{len(sheet)} entities drawn from {len(found)} -> {args.out}")
        return 0
    paths = (
        [Path(p) for p in args.labels] if args.labels else sorted(LABELS.glob("entities-*.jsonl"))
    )
    files = {p.name: read_labels(p) for p in paths}
    only = {(lab["dataset"], lab["conversation"]) for labs in files.values() for lab in labs}
    found, _ = system_entities(datasets, only)
    result = {name: score(labs, found) for name, labs in files.items()}
    print(json.dumps(result, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How many benchmark questions hold identifier-like tokens by recall's rule
(:mod:`pipelines.recall.steps.identifiers`): those are the questions whose ranking the exact-lookup
guarantee can change. Reads LoCoMo and BEAM-100K through their loaders; runs no recall.

    .venv/bin/python -m benchmarks.identifier_questions
"""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import beam, locomo
from benchmarks.format import Dataset
from pipelines.recall.steps.identifiers import find_identifiers


def count(dataset: Dataset) -> dict[str, object]:
    """Questions, those with an identifier, and the identifiers found (with counts)."""
    hits: list[dict[str, object]] = []
    tokens: Counter[str] = Counter()
    total = 0
    for conv in dataset.conversations:
        for q in conv.questions:
            total += 1
            found = find_identifiers(q.text)
            if found:
                tokens.update(found)
                hits.append({"id": q.id, "question": q.text, "identifiers": found})
    return {
        "dataset": dataset.name,
        "questions": total,
        "with_identifiers": len(hits),
        "tokens": dict(tokens.most_common()),
        "examples": hits[:40],
    }


def main() -> None:
    for load in (locomo.load, beam.load):
        dataset, _ = load()
        print(json.dumps(count(dataset), indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()

"""What a grader scores a reader's answer against: the gold answer and its rubric nuggets.

Read only by ``grade-pack`` (never by ``prepare``: the reader's prompts are made without any
gold field).

* **BEAM**: every question's ``rubric`` (a list of nuggets) from the split's
  ``probing_questions.json``, matched to the converted question by id
  (``beam-<n>:<ability>:<i>``, the order :mod:`benchmarks.beam` numbers them in); a question
  without a rubric gets its gold answer as its one nugget.
* **LoCoMo** and the generic format: the gold answer is the one nugget; an unanswerable
  question (LoCoMo's adversarial category) has the nugget "says the information is not
  there" and no gold answer of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks.format import Dataset

ABSTAIN_NUGGET = "States that the information is not available (abstains)"


@dataclass(frozen=True)
class GoldAnswer:
    answer: str
    nuggets: tuple[str, ...]
    abstention: bool
    """The right answer is to say the information is not there."""


def from_dataset(dataset: Dataset) -> dict[str, GoldAnswer]:
    """Question id -> gold answer, nuggets = the gold answer (LoCoMo, generic)."""
    out: dict[str, GoldAnswer] = {}
    for c in dataset.conversations:
        for q in c.questions:
            answer = q.answer or ""
            if q.unanswerable:
                nuggets: tuple[str, ...] = (ABSTAIN_NUGGET,)
            else:
                nuggets = (answer,) if answer else ()
            out[q.id] = GoldAnswer(answer, nuggets, q.unanswerable)
    return out


def beam_rubrics(root: Path) -> dict[str, list[str]]:
    """Question id -> its rubric nuggets, for every numbered conversation folder of ``root``."""
    from benchmarks.beam import conversation_folders

    out: dict[str, list[str]] = {}
    for folder in conversation_folders(root):
        probing = json.loads(
            (folder / "probing_questions" / "probing_questions.json").read_text(encoding="utf-8")
        )
        for ability, items in probing.items():
            for i, raw in enumerate(items):
                rubric = raw.get("rubric") or []
                out[f"beam-{folder.name}:{ability}:{i}"] = [str(r) for r in rubric if str(r)]
    return out


def from_beam(dataset: Dataset, root: Path) -> dict[str, GoldAnswer]:
    """BEAM's gold: the converted answers with each question's rubric as its nuggets."""
    rubrics = beam_rubrics(root)
    out = {}
    for qid, gold in from_dataset(dataset).items():
        nuggets = tuple(rubrics.get(qid) or ()) or ((gold.answer,) if gold.answer else ())
        out[qid] = GoldAnswer(gold.answer, nuggets, gold.abstention)
    return out

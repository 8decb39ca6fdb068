"""BEAM (Tavakoli et al., ICLR 2026, arXiv:2510.27246) → the generic benchmark format.

BEAM states no licence: the 100K split is read from ``../shared/datasets/beam/100K`` (else
``/work/shared/datasets/beam/100K``, or the folder ``MNEMOGRAPH_BEAM_PATH`` names) for
evaluation only and never copied into the repository. A split is a folder of conversations
``<n>/``, each holding ``chat.json``, ``topic.json`` and
``probing_questions/probing_questions.json``.

Conversion rules (documented in BENCHMARKS.md as well):

* **Conversations**: every numbered sub-folder, in numeric order; id ``beam-<n>``.
* **Sessions**: one per batch of ``chat.json`` (a batch is roughly one session), in file order;
  id ``batch-<batch_number>``. ``started_at`` is the batch's ``time_anchor`` ("March-15-2024",
  read as midnight UTC) or, when the batch has none (the 100K files carry it on the batch's
  first user message), the first anchor among its messages; a batch without any inherits the
  last anchor seen. No stage label.
* **Turns**: every message of every exchange, in order; id = the message ``id`` as a string
  (unique in the conversation: the evidence ids); ``role`` and ``speaker`` = the message's role
  (``user`` / ``assistant``); ``time`` = the last ``time_anchor`` seen up to that message.
  Content is kept verbatim, however long (two messages of the split exceed 300,000 characters).
* **Questions**: every question of ``probing_questions.json``, abilities in file order; id
  ``<conversation>:<ability>:<i>``; category = the ability; text = ``question``; answer = the
  ability's gold field (``answer``, ``ideal_answer``, ``ideal_response``, ``ideal_summary`` or
  ``expected_compliance``); ``abstention`` questions are ``unanswerable``; ``question_time`` =
  the conversation's last anchor (every question is asked after the whole conversation).
* **Evidence**: ``source_chat_ids`` flattened (a list, nested lists, or a dict of named lists
  such as ``original_info`` / ``updated_info``), de-duplicated in order. Ids that name no
  message of the conversation are dropped and counted in :class:`ConversionReport`, never
  guessed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.format import Conversation, Dataset, Question, Session, Turn

REPO_ROOT = Path(__file__).resolve().parents[1]
_SHARED_BEAM = Path("shared") / "datasets" / "beam" / "100K"
DEFAULT_PATHS: tuple[Path, ...] = (
    REPO_ROOT.parent / _SHARED_BEAM,
    Path("/work") / _SHARED_BEAM,
)
DEFAULT_PATH = next((p for p in DEFAULT_PATHS if p.is_dir()), DEFAULT_PATHS[0])
ENV_PATH = "MNEMOGRAPH_BEAM_PATH"

#: The gold answer's field per ability (the first present wins).
ANSWER_FIELDS = ("answer", "ideal_answer", "ideal_response", "ideal_summary", "expected_compliance")
UNANSWERABLE_ABILITY = "abstention"
_ANCHOR_FORMAT = "%B-%d-%Y"
_NUMBERED = re.compile(r"^\d+$")


class BeamUnavailable(FileNotFoundError):
    """The BEAM folder is not where we looked; the message says where and how to fix it."""


@dataclass
class ConversionReport:
    conversations: int = 0
    sessions: int = 0
    turns: int = 0
    questions: int = 0
    longest_turn_chars: int = 0
    evidence_ids: int = 0
    """Evidence ids after flattening (before de-duplication)."""
    evidence_unresolved: list[dict[str, str]] = field(default_factory=list)
    """Ids that name no message of their conversation (dropped)."""
    questions_without_evidence: int = 0
    """Questions left with no evidence (abstention questions have none by design)."""

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["evidence_unresolved_count"] = len(self.evidence_unresolved)
        return out


def resolve_path(path: str | Path | None = None) -> Path:
    """The split folder to read: ``path``, else ``$MNEMOGRAPH_BEAM_PATH``, else the shared copy."""
    if path:
        p, how = Path(path), "given path"
    elif os.environ.get(ENV_PATH):
        p, how = Path(os.environ[ENV_PATH]), ENV_PATH
    else:
        p, how = DEFAULT_PATH, "default location"
    if not p.is_dir():
        raise BeamUnavailable(
            f"BEAM not found at {p} ({how}). Put the 100K split of github.com/mohammadtavakoli78/"
            f"BEAM (chats/100K/<n>/) at {DEFAULT_PATH} or set {ENV_PATH}=/path/to/100K."
        )
    return p


def parse_anchor(text: str) -> datetime:
    """ "March-15-2024" → 2024-03-15 00:00 UTC."""
    try:
        return datetime.strptime(text.strip(), _ANCHOR_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        raise ValueError(f"unrecognised BEAM time anchor {text!r}") from None


def flatten_ids(value: Any) -> Iterator[Any]:
    """Every leaf of ``source_chat_ids``: a list, nested lists or a dict of named lists."""
    if isinstance(value, dict):
        for v in value.values():
            yield from flatten_ids(v)
    elif isinstance(value, list):
        for v in value:
            yield from flatten_ids(v)
    elif value is not None:
        yield value


def _messages(batch: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for exchange in batch.get("turns") or []:
        yield from exchange


def convert_sessions(
    chat: Sequence[dict[str, Any]], report: ConversionReport
) -> tuple[list[Session], datetime | None]:
    """The batches of one ``chat.json`` as sessions, and the last anchor seen."""
    anchor: datetime | None = None
    sessions = []
    for batch in chat:
        messages = list(_messages(batch))
        own = batch.get("time_anchor") or next(
            (m["time_anchor"] for m in messages if m.get("time_anchor")), None
        )
        if batch.get("time_anchor"):
            anchor = parse_anchor(batch["time_anchor"])
        started = parse_anchor(own) if own else anchor
        turns = []
        for m in messages:
            if m.get("time_anchor"):
                anchor = parse_anchor(m["time_anchor"])
            role = str(m["role"])
            content = str(m["content"])
            report.longest_turn_chars = max(report.longest_turn_chars, len(content))
            turns.append(
                Turn(id=str(m["id"]), role=role, speaker=role, content=content, time=anchor)
            )
        if not turns:
            continue
        sessions.append(
            Session(id=f"batch-{batch['batch_number']}", turns=tuple(turns), started_at=started)
        )
    return sessions, anchor


def convert_questions(
    cid: str,
    probing: dict[str, list[dict[str, Any]]],
    turn_ids: set[str],
    question_time: datetime | None,
    report: ConversionReport,
) -> list[Question]:
    questions = []
    for ability, items in probing.items():
        for i, raw in enumerate(items):
            qid = f"{cid}:{ability}:{i}"
            evidence: list[str] = []
            for leaf in flatten_ids(raw.get("source_chat_ids")):
                report.evidence_ids += 1
                eid = str(leaf)
                if eid not in turn_ids:
                    report.evidence_unresolved.append({"question": qid, "id": eid})
                elif eid not in evidence:
                    evidence.append(eid)
            if not evidence:
                report.questions_without_evidence += 1
            answer = next((raw[f] for f in ANSWER_FIELDS if raw.get(f) is not None), None)
            questions.append(
                Question(
                    id=qid,
                    text=str(raw["question"]).strip(),
                    category=ability,
                    evidence=tuple(evidence),
                    answer=None if answer is None else str(answer),
                    question_time=question_time,
                    unanswerable=ability == UNANSWERABLE_ABILITY,
                )
            )
    return questions


def convert_conversation(
    number: str,
    chat: Sequence[dict[str, Any]],
    probing: dict[str, list[dict[str, Any]]],
    report: ConversionReport,
) -> Conversation:
    cid = f"beam-{number}"
    sessions, last_anchor = convert_sessions(chat, report)
    turn_ids = {t.id for s in sessions for t in s.turns}
    questions = convert_questions(cid, probing, turn_ids, last_anchor, report)
    report.conversations += 1
    report.sessions += len(sessions)
    report.turns += len(turn_ids)
    report.questions += len(questions)
    return Conversation(
        id=cid,
        sessions=tuple(sessions),
        questions=tuple(questions),
        speakers=("user", "assistant"),
    )


def conversation_folders(root: Path) -> list[Path]:
    """The numbered conversation folders of a split, in numeric order."""
    return sorted(
        (p for p in root.iterdir() if p.is_dir() and _NUMBERED.match(p.name)),
        key=lambda p: int(p.name),
    )


def load(
    path: str | Path | None = None, name: str = "beam-100k"
) -> tuple[Dataset, ConversionReport]:
    """Read and convert a BEAM split folder (see the module docstring)."""
    root = resolve_path(path)
    folders = conversation_folders(root)
    if not folders:
        raise BeamUnavailable(f"no numbered conversation folders in {root}")
    report = ConversionReport()
    convs = []
    for folder in folders:
        chat = json.loads((folder / "chat.json").read_text(encoding="utf-8"))
        probing_path = folder / "probing_questions" / "probing_questions.json"
        probing = json.loads(probing_path.read_text(encoding="utf-8"))
        convs.append(convert_conversation(folder.name, chat, probing, report))
    meta = {
        "source": "BEAM (Tavakoli et al., arXiv:2510.27246; mohammadtavakoli78/BEAM, chats/"
        f"{root.name}), no licence stated: evaluation only",
        "role_mapping": "speaker = role (user / assistant)",
        "sessions": "one per batch; times from time_anchor (later messages inherit it)",
        "question_time": "the conversation's last time anchor",
        "conversion": report.as_dict(),
    }
    return Dataset(name=name, conversations=tuple(convs), meta=meta), report

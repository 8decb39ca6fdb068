"""LoCoMo (Maharana et al., ACL 2024) → the generic benchmark format.

The dataset is CC BY-NC 4.0: it is read from ``../shared/datasets/locomo/locomo10.json`` (else
``/work/shared/datasets/locomo/locomo10.json``, or the file ``MNEMOGRAPH_LOCOMO_PATH``
names) for evaluation only and never copied into the repository.

Conversion rules (documented in BENCHMARKS.md as well):

* **Sessions**: every ``session_N`` key that exists (a few ``session_N_date_time`` keys have no
  session), in numeric order; session id ``session_N``; ``started_at`` parsed from
  ``session_N_date_time`` ("1:56 pm on 8 May, 2023", read as UTC). No stage label.
* **Turns**: id = ``dia_id`` ("D1:3"); role ``speaker_a`` → ``"user"``, ``speaker_b`` →
  ``"assistant"`` (LoCoMo has two human speakers; the mapping only gives the roles the write path
  expects); the speaker's name is kept in ``speaker``. Turns with an image get
  ``" [shared image: <blip_caption>]"`` appended to their text when a caption is present. Turns
  carry no time of their own (the write path gives them the session's time).
* **Questions**: id ``<sample_id>:q<index>``; category numbers mapped to names with
  :data:`CATEGORY_NAMES` (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial;
  checked against the data: category-1 items have 3.1 evidence turns on average, category-2
  items ask "when", category-3 items ask "would …", category-4 items have one evidence turn,
  category-5 items have no ``answer`` but an ``adversarial_answer``); category 5 →
  ``unanswerable=True``; ``question_time`` = the start of the conversation's LAST session
  (LoCoMo gives no time per question, and every question is asked after the whole
  conversation).
* **Evidence**: the ``dia_id`` strings, normalised: entries holding several ids
  ("D8:6; D9:17", "D9:1 D4:4 D4:6") are split, "D:11:26" becomes "D11:26", leading zeros are
  dropped ("D30:05" → "D30:5"). Ids that still do not name a turn of the conversation are
  dropped and counted in :class:`ConversionReport` (and in the dataset's ``meta``), never
  guessed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.format import Conversation, Dataset, Question, Session, Turn

REPO_ROOT = Path(__file__).resolve().parents[1]
_SHARED_LOCOMO = Path("shared") / "datasets" / "locomo" / "locomo10.json"
#: Where the shared copy is looked for: beside the checkout, then the team machines' fixed
#: location (a clone elsewhere, e.g. in /tmp, still finds it). The first that exists wins.
DEFAULT_PATHS: tuple[Path, ...] = (
    REPO_ROOT.parent / _SHARED_LOCOMO,
    Path("/work") / _SHARED_LOCOMO,
)
DEFAULT_PATH = next((p for p in DEFAULT_PATHS if p.is_file()), DEFAULT_PATHS[0])
ENV_PATH = "MNEMOGRAPH_LOCOMO_PATH"

CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
UNANSWERABLE_CATEGORY = 5
ROLE_OF_SPEAKER = {"speaker_a": "user", "speaker_b": "assistant"}

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


class LocomoUnavailable(FileNotFoundError):
    """The LoCoMo file is not where we looked; the message says where and how to fix it."""


@dataclass
class ConversionReport:
    conversations: int = 0
    sessions: int = 0
    turns: int = 0
    image_turns: int = 0
    questions: int = 0
    evidence_raw: int = 0
    """Evidence list entries as they appear in the file."""
    evidence_split: int = 0
    """Entries that held several ids and were split."""
    evidence_normalised: int = 0
    """Ids rewritten to the canonical form ("D:11:26" → "D11:26", "D30:05" → "D30:5")."""
    evidence_unresolved: list[dict[str, str]] = field(default_factory=list)
    """Ids that name no turn of their conversation (dropped): question id and raw entry."""
    questions_without_evidence: int = 0
    """Questions left with no resolvable evidence (excluded from retrieval metrics)."""
    orphan_date_keys: int = 0
    """``session_N_date_time`` keys without a ``session_N``."""

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["evidence_unresolved_count"] = len(self.evidence_unresolved)
        return out


def resolve_path(path: str | Path | None = None) -> Path:
    """The file to read: ``path``, else ``$MNEMOGRAPH_LOCOMO_PATH``, else the shared copy."""
    if path:
        p, how = Path(path), "given path"
    elif os.environ.get(ENV_PATH):
        p, how = Path(os.environ[ENV_PATH]), ENV_PATH
    else:
        p, how = DEFAULT_PATH, "default location"
    if not p.is_file():
        raise LocomoUnavailable(
            f"LoCoMo not found at {p} ({how}). Put locomo10.json (github.com/snap-research/locomo, "
            f"data/locomo10.json, CC BY-NC 4.0) at {DEFAULT_PATH} or set {ENV_PATH}=/path/to/file."
        )
    return p


def parse_session_time(text: str) -> datetime:
    """ "1:56 pm on 8 May, 2023" → 2023-05-08 13:56 UTC."""
    cleaned = re.sub(r"\s+", " ", text.strip())
    try:
        t = datetime.strptime(cleaned, _DATE_FORMAT)
    except ValueError:
        raise ValueError(f"unrecognised LoCoMo session date {text!r}") from None
    return t.replace(tzinfo=UTC)


def normalise_evidence(entry: str) -> tuple[list[str], bool]:
    """Split one raw evidence entry into canonical "D<s>:<t>" ids.

    Returns the ids and whether any rewriting happened (split or reformatted). An entry with no
    recognisable id returns ``([], True)``.
    """
    ids = [f"D{int(s)}:{int(t)}" for s, t in _DIA_ID.findall(entry)]
    changed = ids != [entry]
    return ids, changed


def _turn_text(raw: dict[str, Any]) -> str:
    text = str(raw.get("text") or "").strip()
    caption = raw.get("blip_caption")
    if caption:
        text = f"{text} [shared image: {str(caption).strip()}]".strip()
    return text


def convert_sample(sample: dict[str, Any], report: ConversionReport) -> Conversation:
    conv = sample["conversation"]
    cid = str(sample["sample_id"])
    names = {conv["speaker_a"]: "speaker_a", conv["speaker_b"]: "speaker_b"}
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.match(k)))
    report.orphan_date_keys += sum(
        1 for k in conv if k.endswith("_date_time") and k.removesuffix("_date_time") not in conv
    )
    sessions = []
    for n in numbers:
        turns = []
        for raw in conv[f"session_{n}"]:
            speaker = raw["speaker"]
            if speaker not in names:
                raise ValueError(f"{cid} session_{n}: unknown speaker {speaker!r}")
            if raw.get("blip_caption") or raw.get("img_url"):
                report.image_turns += 1
            turns.append(
                Turn(
                    id=raw["dia_id"],
                    role=ROLE_OF_SPEAKER[names[speaker]],
                    speaker=speaker,
                    content=_turn_text(raw),
                )
            )
        date = conv.get(f"session_{n}_date_time")
        sessions.append(
            Session(
                id=f"session_{n}",
                turns=tuple(turns),
                started_at=parse_session_time(date) if date else None,
            )
        )
    times = [s.started_at for s in sessions if s.started_at is not None]
    question_time = max(times) if times else None
    turn_ids = {t.id for s in sessions for t in s.turns}
    questions = []
    for i, qa in enumerate(sample.get("qa") or []):
        qid = f"{cid}:q{i}"
        evidence: list[str] = []
        for entry in qa.get("evidence") or []:
            report.evidence_raw += 1
            ids, changed = normalise_evidence(entry)
            if len(ids) > 1:
                report.evidence_split += 1
            elif changed and ids:
                report.evidence_normalised += 1
            unresolved = [e for e in ids if e not in turn_ids]
            if not ids or unresolved:
                report.evidence_unresolved.append(
                    {"question": qid, "entry": entry, "unresolved": ", ".join(unresolved) or entry}
                )
            for e in ids:
                if e in turn_ids and e not in evidence:
                    evidence.append(e)
        if not evidence:
            report.questions_without_evidence += 1
        cat = int(qa["category"])
        answer = qa.get("answer")
        questions.append(
            Question(
                id=qid,
                text=str(qa["question"]).strip(),
                category=CATEGORY_NAMES.get(cat, f"category-{cat}"),
                evidence=tuple(evidence),
                answer=None if answer is None else str(answer),
                question_time=question_time,
                unanswerable=cat == UNANSWERABLE_CATEGORY,
            )
        )
    report.conversations += 1
    report.sessions += len(sessions)
    report.turns += len(turn_ids)
    report.questions += len(questions)
    return Conversation(
        id=cid,
        sessions=tuple(sessions),
        questions=tuple(questions),
        speakers=(conv["speaker_a"], conv["speaker_b"]),
    )


def convert(
    raw: Sequence[dict[str, Any]], name: str = "locomo"
) -> tuple[Dataset, ConversionReport]:
    """Convert the decoded LoCoMo list into a :class:`Dataset` plus what was normalised."""
    if not isinstance(raw, list):
        raise ValueError("LoCoMo's top level must be a list of samples")
    report = ConversionReport()
    convs = tuple(convert_sample(s, report) for s in raw)
    meta = {
        "source": "LoCoMo (snap-research/locomo, data/locomo10.json), CC BY-NC 4.0",
        "role_mapping": "speaker_a -> user, speaker_b -> assistant",
        "question_time": "start of the conversation's last session",
        "conversion": report.as_dict(),
    }
    return Dataset(name=name, conversations=convs, meta=meta), report


def load(path: str | Path | None = None) -> tuple[Dataset, ConversionReport]:
    p = resolve_path(path)
    return convert(json.loads(p.read_text(encoding="utf-8")))

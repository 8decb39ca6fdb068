"""--speaker-export renames speakers only: texts, questions, evidence and roles stay."""

from __future__ import annotations

import pytest

from benchmarks.format import Conversation, Dataset, Question, Session, Turn
from benchmarks.speaker_export import export_speakers, exported


def _dataset() -> Dataset:
    turns = (
        Turn("t1", "user", "Caroline", "Hey Melanie!"),
        Turn("t2", "user", "Melanie", "Hi Caroline"),
        Turn("t3", "assistant", "assistant", "Hello"),
    )
    q = Question("q1", "What did Caroline say?", "single-hop", ("t1",))
    conv = Conversation("c", (Session("s", turns),), (q,), ("Caroline", "Melanie"))
    return Dataset("d", (conv,))


def test_speakers_are_renamed_and_nothing_else() -> None:
    ds = _dataset()
    out = export_speakers(ds, "handle")
    conv = out.conversations[0]
    turns = conv.sessions[0].turns
    assert [t.speaker for t in turns] == [
        exported("Caroline", "handle"),
        exported("Melanie", "handle"),
        "assistant",  # a role word stays
    ]
    assert [t.content for t in turns] == [t.content for t in ds.conversations[0].sessions[0].turns]
    assert conv.questions == ds.conversations[0].questions
    assert conv.speakers == (exported("Caroline", "handle"), exported("Melanie", "handle"))
    assert out.meta["speaker_export"] == "handle"
    assert export_speakers(ds, None) is ds


def test_styles_are_deterministic() -> None:
    full = exported("Caroline", "full-name")
    assert full.startswith("Caroline ") and full == exported("Caroline", "full-name")
    handle = exported("Caroline", "handle")
    assert handle.startswith("caroline.") and handle[-2:].isdigit()
    phone = exported("Caroline", "phone")
    assert phone.startswith("+1 555 ") and len(phone) == len("+1 555 0100")
    with pytest.raises(ValueError):
        exported("Caroline", "nickname")

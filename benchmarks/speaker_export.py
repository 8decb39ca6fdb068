"""Speakers exported under other names than the ones people use (``--speaker-export``).

Chat exports name a person by an account: a full name ("Caroline Reyes"), a handle
("caroline.reyes42") or a phone number ("+1 555 0142"), while the people in the chat, and
the questions about it, say "Caroline". This rewrites each turn's speaker (never its text,
the questions or the evidence) so the harness measures recall on such an export. A speaker
that is a role word (its turns' role, as BEAM's "user" and "assistant") is left alone.
Deterministic: a name's surname comes from a hash of the name.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from benchmarks.format import Conversation, Dataset

STYLES = ("full-name", "handle", "phone")
_SURNAMES = ("Reyes", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Kowalski", "Haddad", "Byrne")


def exported(name: str, style: str) -> str:
    """``name`` as an export of the given style would show it."""
    digest = hashlib.sha256(name.encode()).digest()
    surname = _SURNAMES[digest[0] % len(_SURNAMES)]
    if style == "full-name":
        return f"{name} {surname}"
    if style == "handle":
        return f"{name.lower()}.{surname.lower()}{digest[1] % 90 + 10}"
    if style == "phone":
        return f"+1 555 {int.from_bytes(digest[2:4]) % 10000:04d}"
    raise ValueError(f"unknown speaker export style {style!r}; one of {STYLES}")


def _conversation(conv: Conversation, style: str) -> Conversation:
    roles = {t.role for s in conv.sessions for t in s.turns}

    def rename(speaker: str) -> str:
        return speaker if speaker in roles else exported(speaker, style)

    sessions = tuple(
        replace(s, turns=tuple(replace(t, speaker=rename(t.speaker)) for t in s.turns))
        for s in conv.sessions
    )
    return replace(conv, sessions=sessions, speakers=tuple(rename(x) for x in conv.speakers))


def export_speakers(dataset: Dataset, style: str | None) -> Dataset:
    """``dataset`` with every speaker renamed as ``style`` exports it (None: unchanged)."""
    if style is None:
        return dataset
    convs = tuple(_conversation(c, style) for c in dataset.conversations)
    return replace(dataset, conversations=convs, meta={**dataset.meta, "speaker_export": style})

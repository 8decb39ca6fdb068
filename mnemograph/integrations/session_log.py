"""A conversation kept as one Mnemograph session, turn by turn: what the chat-history
adapters share (framework-free: the SDK only).

Turn ``n`` (from 0) is stored as memory ``{session_id}#{n}`` (the server's own id for the
n-th turn of a session sent at once), verbatim (``force``: the encoding gate never drops a
message), each append one idempotent ingest. There is no "list a session" route, so reading
walks the ids: the length in O(log n) reads (doubling, then bisection), the last ``n`` turns
in ``n`` more. One writer at a time per session: two appends at the same moment would pick
the same next id (the second then changes that turn, it does not add one).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from mnemograph.client import Client, NotFound, models

#: The API's turn roles (a framework's other kinds of message are stored as one of these).
ROLES = ("user", "assistant", "system", "tool")


@dataclass(frozen=True)
class Turn:
    """One stored message: who said it and what."""

    role: str
    content: str
    speaker: str | None = None
    id: str | None = None
    time: str | None = None


def turn_id(session_id: str, index: int) -> str:
    return f"{session_id}#{index}"


class SessionLog:
    """The turns of session ``session_id`` in ``space``, read and appended over ``client``."""

    def __init__(self, client: Client, space: str, session_id: str) -> None:
        self.client = client
        self.space = space
        self.session_id = session_id
        self._length: int | None = None  # the length seen last (a hint: see __len__)

    def _exists(self, index: int) -> bool:
        try:
            self.client.get_memory(self.space, turn_id(self.session_id, index))
        except NotFound:
            return False
        return True

    def __len__(self) -> int:
        """How many turns are stored: the first missing index (ids are contiguous), counted
        anew on each call (another reader may have appended); two reads when the length
        seen last is still right, O(log n) otherwise (doubling, then bisection)."""
        hint = self._length
        if hint and self._exists(hint - 1) and not self._exists(hint):
            return hint
        if not self._exists(0):
            self._length = 0
            return 0
        low, high = 0, 1  # turn `low` exists; look for a missing `high`
        while self._exists(high):
            low, high = high, high * 2
        while high - low > 1:  # low exists, high does not
            mid = (low + high) // 2
            low, high = (mid, high) if self._exists(mid) else (low, mid)
        self._length = high
        return high

    def turns(self, last: int | None = None) -> list[Turn]:
        """The stored turns in order (only the ``last`` ones when given)."""
        length = len(self)
        start = 0 if last is None else max(0, length - last)
        out = []
        for index in range(start, length):
            memory = self.client.get_memory(self.space, turn_id(self.session_id, index)).memory
            out.append(_turn(memory))
        return out

    def append(self, turns: Sequence[Turn]) -> list[str]:
        """Store ``turns`` after the stored ones (one ingest); their memory ids."""
        if not turns:
            return []
        start = len(self)
        now = datetime.now(UTC)
        payload = []
        for offset, turn in enumerate(turns):
            if turn.role not in ROLES:
                raise ValueError(f"role {turn.role!r} is not one of {ROLES}")
            item: dict[str, object] = {
                "id": turn_id(self.session_id, start + offset),
                "role": turn.role,
                "content": turn.content,
                # distinct, increasing times: the session reads back in this order
                "time": turn.time or (now + timedelta(microseconds=offset)).isoformat(),
            }
            if turn.speaker:
                item["speaker"] = turn.speaker
            payload.append(item)
        session = {"session_id": self.session_id, "turns": payload, "force": True}
        result = self.client.add_session(self.space, session)
        self._length = start + len(turns)
        return list(result.memory_ids)

    def clear(self) -> int:
        """Delete every stored turn of the session (their facts with them); how many."""
        length = len(self)
        for index in reversed(range(length)):  # from the end: a failure leaves a prefix
            with suppress(NotFound):  # deleted meanwhile: the outcome wanted
                self.client.delete_memory(self.space, turn_id(self.session_id, index))
        self._length = 0
        return length


def _turn(memory: models.Memory) -> Turn:
    return Turn(
        role=memory.role or "user",
        content=memory.text or "",
        speaker=memory.speaker,
        id=memory.id,
        time=memory.event_time,
    )


def hit_metadata(hit: models.RecallResult) -> dict[str, object]:
    """What a retriever's document says about the memory it holds."""
    return {
        "memory_id": hit.id,
        "score": hit.score,
        "session_id": hit.session_id,
        "stage_id": hit.stage_id,
        "time": hit.time.isoformat() if hit.time else None,
        "speaker": hit.speaker,
        "role": hit.role,
    }

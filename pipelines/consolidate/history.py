"""History kept when a memory is deleted: the supersessions it made are re-linked or undone.

Deleting a memory deletes its ``SUPERSEDES`` edges and its facts (with theirs). Without this
step, every memory (or fact) it had superseded would stay ``superseded`` with no record of by
what: hidden from recall, not revertible. The rule, applied in the deleting transaction:

* **re-link** when the deleted memory was itself superseded: each supersession it made passes
  to its successor (the newest one that supersedes it). ``A <- B <- C``, delete ``B``:
  ``A <- C``. The record keeps its id and fields (a later revert restores ``A`` exactly) and
  says ``relinked_past: B``. The same holds for the fact-level supersessions of its facts.
* **undo** when it was the current version: each supersession it made is undone as a revert
  would (``A`` and the facts that supersession retired get their prior status back, unless
  another supersession still retires them). ``A <- B``, delete ``B``: ``A`` is active again,
  with its own older history.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pipelines.graph import Tx


def keep_history(tx: Tx, space: str, memory_id: str, now: datetime | None = None) -> dict[str, int]:
    """Re-link or undo the supersessions made by ``memory_id`` (and by its facts), in ``tx``,
    before the memory is deleted. Returns ``supersessions_relinked`` and
    ``supersessions_undone``."""
    relinked = tx.run(
        "consolidate/history_relink", space=space, id=memory_id, now=now or datetime.now(UTC)
    )
    undone = tx.run("consolidate/history_restore", space=space, id=memory_id)
    return {
        "supersessions_relinked": int(relinked[0]["relinked"]) if relinked else 0,
        "supersessions_undone": int(undone[0]["restored"]) if undone else 0,
    }

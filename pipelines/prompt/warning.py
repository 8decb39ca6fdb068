"""The truncation warning banner shown to the reader model.

A model given a silently shortened context cannot tell "this fact does not
exist" from "this fact was cut".  When any slot keeps less than the warning
threshold of its tokens, the decomposer prepends a banner naming each such
slot with its kept and original token counts, e.g.::

    ### CONTEXT TRUNCATION WARNING
    Parts of this prompt were shortened to fit the context window, so information
    may be missing: do not treat an absent fact as evidence that it does not exist.
    - RELATED_CONTEXT: kept 340 of 756 tokens (44%)
    - STAGE_SUMMARIES: removed entirely (0 of 400 tokens)

When even that does not fit (tiny windows), a one-line *compact* form is used::

    ### CONTEXT TRUNCATION WARNING (tokens kept/original): RELATED_CONTEXT 340/756, ...

The header line starts with ``#``, which stored content can never do once
escaped (:func:`pipelines.prompt.blocks.escape_content`), so recalled data
cannot forge or hide a banner.  Percentages are rounded *down* so a slot below a
90 % threshold never reads as "90%".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "BANNER_HEADER",
    "BANNER_SEPARATOR",
    "TruncatedSlot",
    "build_truncation_banner",
    "prepend_banner",
    "retention",
]

BANNER_HEADER = "### CONTEXT TRUNCATION WARNING"
BANNER_SEPARATOR = "\n\n"
_EXPLANATION = (
    "Parts of this prompt were shortened to fit the context window, so information may be "
    "missing: do not treat an absent fact as evidence that it does not exist."
)


def retention(original_tokens: int, final_tokens: int) -> float:
    """Fraction of a slot's tokens that survived; ``1.0`` for an empty original."""
    if original_tokens <= 0:
        return 1.0
    return final_tokens / original_tokens


@dataclass(frozen=True, slots=True)
class TruncatedSlot:
    """One banner line: a slot key with its kept and original token counts."""

    key: str
    original_tokens: int
    final_tokens: int

    @property
    def retention(self) -> float:
        """Kept fraction (final / original tokens)."""
        return retention(self.original_tokens, self.final_tokens)

    def line(self) -> str:
        """The banner line for this slot."""
        if self.final_tokens <= 0:
            return f"- {self.key}: removed entirely (0 of {self.original_tokens} tokens)"
        percent = math.floor(self.retention * 100)
        return (
            f"- {self.key}: kept {self.final_tokens} of {self.original_tokens} tokens ({percent}%)"
        )


def build_truncation_banner(
    truncated: Sequence[TruncatedSlot], compact: bool = False
) -> str | None:
    """Banner text naming every slot in ``truncated`` (in the given order), or ``None``.

    Selecting *which* slots to list (retention below the threshold) is the
    caller's job; this function only renders them.  ``compact`` renders the
    single-line form without the explanation.
    """
    if not truncated:
        return None
    if compact:
        listing = ", ".join(f"{s.key} {s.final_tokens}/{s.original_tokens}" for s in truncated)
        return f"{BANNER_HEADER} (tokens kept/original): {listing}"
    return "\n".join([BANNER_HEADER, _EXPLANATION, *(slot.line() for slot in truncated)])


def prepend_banner(banner: str | None, prompt: str) -> str:
    """``banner + BANNER_SEPARATOR + prompt``, or ``prompt`` when there is no banner."""
    return prompt if banner is None else f"{banner}{BANNER_SEPARATOR}{prompt}"

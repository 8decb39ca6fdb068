"""Every condenser by name, and the choice of one by tags or content shape.

A condenser is a pure function ``(text, budget_tokens, estimator) -> text`` whose result fits
the budget, returns text that already fits unchanged, and holds only pieces of the input plus
elision markers.  The text condensers are in :mod:`pipelines.assemble.text_condensers`; the
``memory_blocks`` condenser, which keeps data blocks whole, in
:mod:`pipelines.assemble.memory_condenser`.
"""

from __future__ import annotations

from collections.abc import Iterable

from pipelines.assemble.blocks import parse_blocks
from pipelines.assemble.memory_condenser import condense_memory_blocks
from pipelines.assemble.text_condensers import (
    ELISION,
    TEXT_CONDENSERS,
    Condenser,
    condense_assistant_message,
    condense_code_signatures,
    condense_entity_triples,
    condense_timeline,
    condense_user_message,
    text_condenser_for,
    truncate,
)
from pipelines.assemble.tokens import TokenEstimator

__all__ = [
    "CONDENSERS",
    "ELISION",
    "Condenser",
    "choose_condenser",
    "condense",
    "condense_assistant_message",
    "condense_code_signatures",
    "condense_entity_triples",
    "condense_memory_blocks",
    "condense_timeline",
    "condense_user_message",
    "truncate",
]

CONDENSERS: dict[str, Condenser] = {**TEXT_CONDENSERS, "memory_blocks": condense_memory_blocks}

_TAG_TO_CONDENSER = {
    "code": "code_signatures",
    "timeline": "timeline",
    "event": "timeline",
    "events": "timeline",
    "triples": "entity_triples",
    "entities": "entity_triples",
    "relations": "entity_triples",
    "user": "user_message",
    "assistant": "assistant_message",
}


def choose_condenser(text: str, tags: Iterable[str] = ()) -> str:
    """Name of the condenser suited to ``text`` (a key of :data:`CONDENSERS`): a known tag,
    else ``memory_blocks`` for rendered data blocks, else the text condenser for its shape
    (:func:`~pipelines.assemble.text_condensers.text_condenser_for`)."""
    for tag in tags:
        name = _TAG_TO_CONDENSER.get(tag.strip().lower())
        if name:
            return name
    if parse_blocks(text):
        return "memory_blocks"
    return text_condenser_for(text)


def condense(
    text: str, budget: int, estimator: TokenEstimator, condenser: str | None = None
) -> tuple[str, str]:
    """Apply ``condenser`` (or the one :func:`choose_condenser` picks).

    Returns ``(result, condenser_name)``.  The result always fits: a condenser
    that broke its contract would be caught here and replaced by truncation.
    """
    name = condenser or choose_condenser(text)
    if name not in CONDENSERS:
        raise KeyError(f"unknown condenser {name!r}; known: {sorted(CONDENSERS)}")
    result = CONDENSERS[name](text, budget, estimator)
    if estimator.count(result) > max(budget, 0):
        result = truncate(text, budget, estimator)
    return result, name

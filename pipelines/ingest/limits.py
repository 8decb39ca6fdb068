"""The write path's request limits: each refusal is a 422 naming the field and where to split.

Checked before any model runs (:mod:`pipelines.ingest.service`): items per request, characters
per memory and per request, ids unique within the request, and the texts the encoder would
embed (``IngestConfig.max_embedding_inputs``, one per new memory, one per chunk of a long one).
"""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.errors import InvalidInput
from pipelines.ingest.config import IngestConfig
from pipelines.ingest.encode import ChunkEncoder
from pipelines.ingest.items import Item
from pipelines.ingest.text import is_utf8


def check_limit(config: IngestConfig, n: int, fld: str) -> None:
    """At most ``max_turns_per_request`` items in one request (or session)."""
    if n > config.max_turns_per_request:
        raise InvalidInput(
            f"at most {config.max_turns_per_request} items per request, got {n}",
            field=fld,
        )


def check_text(config: IngestConfig, text: str, fld: str) -> str:
    """``text`` when it is non-blank, valid UTF-8 and within ``max_content_chars``."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("content must not be empty or whitespace", field=fld)
    if not is_utf8(text):
        raise InvalidInput("content contains a lone UTF-16 surrogate", field=fld)
    if len(text) > config.max_content_chars:
        raise InvalidInput(
            f"content has {len(text):,} characters; the limit is "
            f"{config.max_content_chars:,} per memory",
            field=fld,
        )
    return text


def check_request_size(config: IngestConfig, items: Sequence[Item], fld: str) -> None:
    """At most ``max_request_chars`` characters of content in one request."""
    total = sum(len(it.text) for it in items)
    if total > config.max_request_chars:
        raise InvalidInput(
            f"the request holds {total:,} characters of content; the limit is "
            f"{config.max_request_chars:,} per request (send fewer items per request)",
            field=fld,
        )


def check_unique_ids(items: Sequence[Item], fld: str) -> None:
    """No memory id twice in one request (the second is named)."""
    seen: dict[str, int] = {}
    for it in items:
        if it.id in seen:
            raise InvalidInput(
                f"id {it.id!r} appears twice in the request", field=f"{fld}.{it.index}.id"
            )
        seen[it.id] = it.index


def check_work(
    encoder: ChunkEncoder, config: IngestConfig, labelled: Sequence[tuple[str, Item]], kind: str
) -> None:
    """Refuse (422) a request whose new items need more texts embedded than
    ``max_embedding_inputs``, naming where to split it; ``labelled``: (field, item)."""
    new = [(fld, it) for fld, it in labelled if not it.existing]
    limit = config.max_embedding_inputs
    if encoder.plan_items([it for _, it in new]) <= limit:
        return
    need = [max(1, len(it.spans or ())) for _, it in new]
    for (fld, it), n in zip(new, need, strict=True):
        if n > limit:
            part = max(1, len(it.text) * limit * 9 // (10 * n))  # a tenth to spare
            raise InvalidInput(
                f"{fld} alone needs {n:,} texts embedded (its chunks); the limit is "
                f"{limit:,} per request: send its content in parts of at most about "
                f"{part:,} characters",
                field=f"{fld}.content",
            )
    used = 0
    for (fld, _), n in zip(new, need, strict=True):
        used += n
        if used > limit:
            how = (
                "send the rest in another request with the same session_id, giving the "
                "turns explicit ids (the default ids number turns by their position)"
                if kind == "turns"
                else "send the rest in another request"
            )
            raise InvalidInput(
                f"the request needs {sum(need):,} texts embedded (one per new memory, one "
                f"per chunk of a long one); the limit is {limit:,} per request: the items "
                f"before {fld} fit; {how}",
                field=fld,
            )

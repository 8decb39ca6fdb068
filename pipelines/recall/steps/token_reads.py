"""Reading late-interaction token vectors and memory embeddings through the process's
:class:`~pipelines.models.token_cache.TokenCache`: what the cache holds is not read again.

Memories are keyed by their ingestion stamp (what the candidate rows bring); a long memory's
chunk by its memory's stamp."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from pipelines.models.late_interaction import TOKEN_FORMAT
from pipelines.models.token_cache import EMBEDDING, TOKENS, TokenCache
from pipelines.recall.state import RecallState
from pipelines.recall.steps.base import StepContext


def cached(ctx: StepContext, stamps: dict[str, int], kind: str = TOKENS) -> dict[str, bytes]:
    """The cached ``kind`` of ``stamps`` (id -> stamp); nothing without a cache."""
    cache: TokenCache | None = ctx.tokens
    return cache.get_many(ctx.space, stamps, kind) if cache is not None and stamps else {}


def keep(
    ctx: StepContext, stamps: dict[str, int], blobs: dict[str, bytes | None], kind: str = TOKENS
) -> None:
    """Put the vectors just read (those with a stamp and any bytes) into the cache."""
    cache: TokenCache | None = ctx.tokens
    if cache is not None:
        cache.put_many(
            ctx.space, {i: (stamps[i], b) for i, b in blobs.items() if b and i in stamps}, kind
        )


def cached_embeddings(ctx: StepContext, stamps: dict[str, int]) -> dict[str, np.ndarray]:
    """The cached embeddings of ``stamps`` (id -> stamp)."""
    found = cached(ctx, stamps, EMBEDDING)
    return {i: np.frombuffer(b, dtype=np.float32).copy() for i, b in found.items()}


def keep_embeddings(
    ctx: StepContext, stamps: dict[str, int], vectors: dict[str, np.ndarray]
) -> None:
    """Put the embeddings just read (those with a stamp) into the cache."""
    blobs: dict[str, bytes | None] = {i: v.astype(np.float32).tobytes() for i, v in vectors.items()}
    keep(ctx, stamps, blobs, EMBEDDING)


def memory_stamps(state: RecallState, ids: Iterable[str]) -> dict[str, int]:
    """The ingestion stamps of the candidates among ``ids`` that have one."""
    return {i: s for i in ids if (s := state.pool[i].stamp) is not None}


def memory_tokens(state: RecallState, ctx: StepContext, ids: list[str]) -> None:
    """Fill ``state.tokens`` for ``ids`` it lacks: from the cache, then from the graph
    (``None`` for a memory without vectors in the current format)."""
    missing = [i for i in ids if i not in state.tokens]
    if not missing:
        return
    stamps = memory_stamps(state, missing)
    hits = cached(ctx, stamps)
    state.tokens.update(hits)
    rest = [i for i in missing if i not in hits]
    if not rest:
        return
    rows = ctx.store.read(
        "recall/token_vectors", space=ctx.space, ids=rest, token_format=TOKEN_FORMAT
    )
    read = {r["id"]: r["tokens"] for r in rows}
    state.tokens.update(dict.fromkeys(rest))
    state.tokens.update(read)
    keep(ctx, stamps, read)


def chunk_tokens(ctx: StepContext, chunks: dict[str, int]) -> dict[str, bytes]:
    """The vectors of the chunks ``chunks`` (chunk id -> its memory's stamp)."""
    hits = cached(ctx, chunks)
    rest = [c for c in chunks if c not in hits]
    if rest:
        rows = ctx.store.read(
            "recall/chunk_token_vectors", space=ctx.space, ids=rest, token_format=TOKEN_FORMAT
        )
        read = {r["id"]: r["tokens"] for r in rows}
        keep(ctx, chunks, read)
        hits.update({c: b for c, b in read.items() if b})
    return hits


def session_tokens(
    ctx: StepContext, sessions: list[str], statuses: list[str]
) -> dict[str, list[bytes]]:
    """Per conversation session, the vectors of its memories (current format, given
    statuses): who the members are is one light read, their vectors come from the cache
    where it has them."""
    members = [
        (r["session_id"], memory, stamp)
        for r in ctx.store.read(
            "recall/session_members",
            space=ctx.space,
            sessions=sessions,
            token_format=TOKEN_FORMAT,
            statuses=statuses,
        )
        for memory, stamp in r["members"]
    ]
    stamps = {memory: int(stamp) for _, memory, stamp in members if stamp is not None}
    blobs: dict[str, bytes | None] = dict(cached(ctx, stamps))
    rest = [memory for _, memory, _ in members if memory not in blobs]
    if rest:
        read = ctx.store.read(
            "recall/token_vectors", space=ctx.space, ids=rest, token_format=TOKEN_FORMAT
        )
        fresh = {r["id"]: r["tokens"] for r in read}
        keep(ctx, stamps, fresh)
        blobs.update(fresh)
    out: dict[str, list[bytes]] = {}
    for session, memory, _ in members:
        blob = blobs.get(memory)
        if blob:
            out.setdefault(session, []).append(blob)
    return out

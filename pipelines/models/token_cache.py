"""Vectors read from the graph, kept in process (bounded, LRU): late-interaction token
vectors and memory embeddings.

A memory's stored vectors never change while it exists (its text is verbatim, its embedding
is written once, and the backfill job only rewrites other token formats), but they are the
bulk of what a recall reads: a technical turn's token vectors are 10 to 30 KB, and recall
reads those of its head and of whole sessions, and the embeddings of the head for selection.
The cache keys an entry by (space, kind, memory or chunk id, the memory's ingestion time in
microseconds): a memory deleted and stored again under its id is a new entry, and a space's
entries are only ever looked up by ids that space's own reads returned. Bounded by the bytes
it holds; the least recently used go first."""

from __future__ import annotations

import threading
from collections import OrderedDict

Key = tuple[str, str, str, int]

#: What an entry holds: packed token vectors, or an embedding as float32 bytes.
TOKENS = "tokens"
EMBEDDING = "embedding"


class TokenCache:
    """Vectors by (space, kind, id, stamp); at most ``max_bytes`` held. Thread-safe."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must be >= 0")
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Key, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Bytes held."""
        return self._bytes

    def get_many(self, space: str, stamps: dict[str, int], kind: str = TOKENS) -> dict[str, bytes]:
        """The cached ``kind`` of the ids in ``stamps`` (id -> stamp) that have an entry."""
        out: dict[str, bytes] = {}
        with self._lock:
            for item_id, stamp in stamps.items():
                key = (space, kind, item_id, stamp)
                blob = self._entries.get(key)
                if blob is not None:
                    self._entries.move_to_end(key)
                    out[item_id] = blob
        return out

    def held(self, space: str) -> int:
        """Entries of ``space``."""
        with self._lock:
            return sum(1 for k in self._entries if k[0] == space)

    def drop_space(self, space: str) -> int:
        """Forget every entry of ``space`` (its erasure); the number dropped."""
        with self._lock:
            keys = [k for k in self._entries if k[0] == space]
            for key in keys:
                self._bytes -= len(self._entries.pop(key))
        return len(keys)

    def put_many(self, space: str, blobs: dict[str, tuple[int, bytes]], kind: str = TOKENS) -> None:
        """Keep ``blobs`` (id -> (stamp, vectors)) as ``kind``; an entry larger than the cache
        is not kept."""
        with self._lock:
            for item_id, (stamp, blob) in blobs.items():
                if not blob or len(blob) > self.max_bytes:
                    continue
                key = (space, kind, item_id, stamp)
                old = self._entries.pop(key, None)
                if old is not None:
                    self._bytes -= len(old)
                self._entries[key] = bytes(blob)
                self._bytes += len(blob)
            while self._bytes > self.max_bytes and self._entries:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= len(dropped)

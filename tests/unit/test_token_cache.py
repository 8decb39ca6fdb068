"""The vector cache: keyed by space, kind, id and stamp; bounded by bytes, least recently used
out."""

from __future__ import annotations

import pytest

from pipelines.models.token_cache import EMBEDDING, TokenCache


def test_entries_are_keyed_by_space_id_and_stamp() -> None:
    cache = TokenCache(1_000)
    cache.put_many("s", {"a": (1, b"x" * 10), "b": (1, b"")})  # no bytes: nothing kept
    assert cache.get_many("s", {"a": 1, "b": 1}) == {"a": b"x" * 10}
    assert cache.get_many("s", {"a": 2}) == {}  # stored again under its id: another entry
    assert cache.get_many("t", {"a": 1}) == {}  # another space never sees it
    assert cache.size == 10


def test_the_least_recently_used_go_first_and_the_bound_holds() -> None:
    cache = TokenCache(30)
    cache.put_many("s", {"a": (1, b"a" * 10), "b": (1, b"b" * 10), "c": (1, b"c" * 10)})
    cache.get_many("s", {"a": 1})  # a is now the most recent
    cache.put_many("s", {"d": (1, b"d" * 10)})
    assert set(cache.get_many("s", {k: 1 for k in "abcd"})) == {"a", "c", "d"}
    assert cache.size == 30
    cache.put_many("s", {"big": (1, b"z" * 31)})  # larger than the cache: not kept
    assert cache.get_many("s", {"big": 1}) == {} and cache.size == 30
    cache.put_many("s", {"a": (1, b"A" * 5)})  # replacing an entry counts its new size
    assert cache.size == 25
    with pytest.raises(ValueError):
        TokenCache(-1)


def test_erasing_a_space_drops_its_entries_only() -> None:
    cache = TokenCache(1_000)
    cache.put_many("s", {"a": (1, b"x" * 10), "b": (2, b"y" * 5)})
    cache.put_many("t", {"a": (1, b"z" * 7)})
    assert cache.drop_space("s") == 2
    assert cache.get_many("s", {"a": 1, "b": 2}) == {}
    assert cache.get_many("t", {"a": 1}) == {"a": b"z" * 7}
    assert cache.size == 7


def test_token_vectors_and_embeddings_of_one_memory_are_separate_entries() -> None:
    cache = TokenCache(1_000)
    cache.put_many("s", {"a": (1, b"t" * 10)})
    assert cache.get_many("s", {"a": 1}, EMBEDDING) == {}
    cache.put_many("s", {"a": (1, b"e" * 8)}, EMBEDDING)
    assert cache.get_many("s", {"a": 1}) == {"a": b"t" * 10}
    assert cache.get_many("s", {"a": 1}, EMBEDDING) == {"a": b"e" * 8}
    assert cache.size == 18 and cache.drop_space("s") == 2

"""The flat-recall baseline: packing recall results into a token budget."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.packing import estimate_tokens, pack, render
from benchmarks.sut import Hit


def hit(i: str, text: str) -> Hit:
    return Hit(
        id=i, session_id="s", content=text, speaker="Ann", time=datetime(2023, 5, 8, tzinfo=UTC)
    )


def cost(h: Hit) -> int:
    return estimate_tokens(render(h)) + 1


def test_estimate_is_chars_over_three_rounded_up():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("abcd") == 2
    assert render(hit("x", "hello")) == "[2023-05-08] Ann: hello"


def test_rank_order_and_first_fit():
    a, b, c = hit("a", "x" * 30), hit("b", "y" * 300), hit("c", "z" * 30)
    budget = cost(a) + cost(c) + 5  # b does not fit after a; c still does
    p = pack([a, b, c], budget)
    assert p.ids == ("a", "c")
    assert p.skipped == 1 and p.offered == 3
    assert p.used_tokens == cost(a) + cost(c) <= budget


def test_zero_and_negative_budget():
    assert pack([hit("a", "x")], 0).ids == ()
    with pytest.raises(ValueError):
        pack([], -1)


@given(
    st.lists(st.text(min_size=1, max_size=400), max_size=30),
    st.integers(min_value=0, max_value=3000),
)
def test_never_exceeds_budget_and_keeps_rank_order(texts, budget):
    hits = [hit(str(i), t) for i, t in enumerate(texts)]
    p = pack(hits, budget)
    assert p.used_tokens <= budget
    assert list(p.ids) == sorted(p.ids, key=int)
    assert p.used_tokens == sum(cost(h) for h in hits if h.id in p.ids)
    assert len(p.ids) + p.skipped == len(hits)

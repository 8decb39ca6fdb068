"""The facts tier's choice (pure): rank order, first fit, no fact of a turn already shown, at
most ``per_memory`` per turn, no repeated text."""

from __future__ import annotations

from pipelines.assemble.recalls import Fact, choose_facts


def fact(fid: str, source: str, text: str, score: float = 0.5) -> Fact:
    return Fact(fid, text, "fact", "Ann", source, None, score)


def cost(f: Fact) -> int:
    return len(f.text.split())


def test_rank_order_first_fit_and_skips():
    facts = [
        fact("a#f0", "a", "I moved to Lisbon in 2021"),  # 6: its turn is shown
        fact("b#f0", "b", "My sister Clara is vegetarian"),  # 5
        fact("b#f1", "b", "Clara works at Siemens"),  # 4: second of turn b
        fact("c#f0", "c", "My sister Clara is vegetarian."),  # same text as b#f0
        fact("d#f0", "d", "I booked the hotel Memmo in Alfama for May"),  # 9: does not fit
        fact("e#f0", "e", "I fly with TAP"),  # 4: fits after the long one is skipped
    ]
    out = choose_facts(facts, shown={"a"}, room=10, per_memory=1, cost=cost)
    assert [f.id for f in out] == ["b#f0", "e#f0"]


def test_per_memory_and_empty_room():
    facts = [fact("b#f0", "b", "one two"), fact("b#f1", "b", "three four")]
    assert [f.id for f in choose_facts(facts, set(), 10, 2, cost)] == ["b#f0", "b#f1"]
    assert choose_facts(facts, set(), 1, 2, cost) == []
    assert choose_facts([], set(), 100, 1, cost) == []

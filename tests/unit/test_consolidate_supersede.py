"""Supersession planning (pure): timelines per speaker and attribute, memory vs fact level."""

from pipelines.consolidate.claims import extract_claims
from pipelines.consolidate.config import SupersedeConfig
from pipelines.consolidate.supersede import ClaimedMemory, FactClaims, plan_supersessions

CFG = SupersedeConfig()


def mem(mid, text, t, speaker="Ann", facts=()):
    row = {"id": mid, "text": text, "speaker": speaker, "role": "user", "event_time": None}
    m = ClaimedMemory.from_row(row, [FactClaims(f, tuple(extract_claims(x))) for f, x in facts])
    return ClaimedMemory(m.id, m.speaker, (float(t), 0.0, 0), m.claims, m.coverage, m.facts)


def pairs(plans):
    return [(p.kind, p.older, p.newer) for p in plans]


def test_value_changed_twice_gives_a_chain():
    ms = [
        mem("m1", "I live in Paris.", 1),
        mem("m2", "I moved to Berlin!", 2),
        mem("m3", "I moved to Tokyo last week.", 3),
    ]
    plans = plan_supersessions(ms, CFG)
    assert pairs(plans) == [("memory", "m1", "m2"), ("memory", "m2", "m3")]
    assert plans[0].reason == "i:residence: Paris -> Berlin"


def test_restating_supersedes_nothing_and_order_of_input_does_not_matter():
    ms = [mem("a", "I live in Paris.", 1), mem("b", "I live in Paris, France.", 2)]
    assert plan_supersessions(ms, CFG) == []
    ms = [mem("c", "I moved to Rome.", 3), *ms]
    assert pairs(plan_supersessions(ms, CFG)) == [
        ("memory", "a", "c"),
        ("memory", "b", "c"),
    ]


def test_other_speakers_and_ties_never_supersede():
    ms = [mem("a", "I live in Paris.", 1), mem("b", "I live in Berlin.", 2, speaker="Bob")]
    assert plan_supersessions(ms, CFG) == []
    tied = [mem("a", "I live in Paris.", 1), mem("b", "I live in Berlin.", 1)]
    assert plan_supersessions(tied, CFG) == []


def test_negation_supersedes():
    ms = [mem("a", "I like sushi.", 1), mem("b", "I don't like sushi anymore.", 2)]
    assert pairs(plan_supersessions(ms, CFG)) == [("memory", "a", "b")]


def test_memory_that_says_more_only_loses_the_fact():
    older = mem(
        "a",
        "I live in Paris and I love the Louvre.",
        1,
        facts=[("a#f0", "I live in Paris"), ("a#f1", "I love the Louvre")],
    )
    newer = mem("b", "I moved to Berlin.", 2, facts=[("b#f0", "I moved to Berlin")])
    assert pairs(plan_supersessions([older, newer], CFG)) == [("fact", "a#f0", "b#f0")]
    # without matching facts nothing is retired at all
    bare = mem("c", "I moved to Berlin.", 2)
    assert plan_supersessions([older, bare], CFG) == []


def test_blocked_and_similarity():
    ms = [mem("a", "I live in Paris.", 1), mem("b", "I moved to Berlin.", 2)]
    assert plan_supersessions(ms, CFG, blocked=["a>b"]) == []
    assert plan_supersessions(ms, CFG, similarity=lambda a, b: 0.05) == []
    assert len(plan_supersessions(ms, CFG, similarity=lambda a, b: 0.5)) == 1

"""The synthetic corpus for the speed benchmark: deterministic, exact sizes, prefix-stable."""

from __future__ import annotations

from collections import Counter

from benchmarks import synth


def turns(sessions):
    return [t for s in sessions for t in s.turns]


def test_deterministic_and_exact_sizes():
    a, b = synth.take(1500), synth.take(1500)
    assert a == b
    assert len(turns(a)) == 1500
    assert synth.take(1500, synth.SynthConfig(seed=8)) != a


def test_filling_in_steps_equals_filling_at_once():
    whole = turns(synth.take(3000))
    steps = turns(synth.take(1000)) + turns(synth.take(3000, skip=1000))
    assert [t.id for t in steps] == [t.id for t in whole]
    assert [t.content for t in steps] == [t.content for t in whole]
    ids = [s.id for s in synth.take(1000) + synth.take(3000, skip=1000)]
    assert len(ids) == len(set(ids))  # a session cut at the boundary gets a new id


def test_corpus_shape():
    sessions = synth.take(5000)
    ts = turns(sessions)
    assert len({t.id for t in ts}) == len(ts)
    assert len({t.speaker for t in ts}) >= 40  # many speakers
    assert len({s.stage for s in sessions}) >= 20  # explicit stage labels
    assert all(s.turns[0].time == s.started_at for s in sessions)
    times = [s.started_at for s in sessions]
    assert times == sorted(times)  # dates advance
    assert {t.role for t in ts} == {"user", "assistant"}
    # recurring entities: some people are mentioned in many turns
    people = Counter(p for t in ts for p in synth.PEOPLE if p in t.content)
    assert people.most_common(1)[0][1] > 25
    assert all(20 <= len(t.content) <= 200 for t in ts)


def test_queries_are_fixed():
    assert synth.queries(10) == synth.queries(10)
    assert len(set(synth.queries(40))) > 30

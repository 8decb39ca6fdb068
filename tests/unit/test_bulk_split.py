"""The SDK's splitter (mnemograph.client.bulk.pack): every request within every limit, turns
in order, none lost or duplicated; stable ids; the embedding-input estimate."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mnemograph.client.bulk import (
    PART_OVERHEAD_BYTES,
    Cost,
    Limits,
    estimate_inputs,
    pack,
    requests_of,
    with_ids,
)

costs = st.builds(
    Cost,
    chars=st.integers(0, 500),
    bytes=st.integers(1, 600),
    inputs=st.integers(1, 6),
)
limits = st.builds(
    Limits,
    max_items_per_request=st.integers(1, 12),
    max_request_chars=st.integers(1, 2_000),
    max_request_bytes=st.integers(1, 6_000),
    max_embedding_inputs=st.integers(1, 20),
)


def _alone_over(c: Cost, lim: Limits) -> bool:
    return (
        c.chars > lim.max_request_chars
        or c.bytes + PART_OVERHEAD_BYTES > lim.max_request_bytes
        or c.inputs > lim.max_embedding_inputs
    )


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(costs, max_size=25), max_size=6),
    limits,
    st.booleans(),
    st.none() | st.integers(1, 8),
)
def test_every_request_fits_and_nothing_is_lost(sessions, lim, multi, part_items):
    out = pack(sessions, lim, multi=multi, part_items=part_items)
    flat = [(p.session, i) for request in out for p in request for i in range(p.start, p.end)]
    assert flat == [(s, i) for s, turns in enumerate(sessions) for i in range(len(turns))]
    for request in out:
        assert request and all(p.end > p.start for p in request)
        assert all(p.end - p.start <= (part_items or lim.max_items_per_request) for p in request)
        assert len({p.session for p in request}) == len(request)  # a session once a request
        assert multi or len(request) == 1
        turns = [sessions[p.session][i] for p in request for i in range(p.start, p.end)]
        if len(turns) == 1 and _alone_over(turns[0], lim):
            continue  # a turn over a limit alone goes alone: the server names it
        assert len(turns) <= lim.max_items_per_request
        assert sum(c.chars for c in turns) <= lim.max_request_chars
        assert sum(c.inputs for c in turns) <= lim.max_embedding_inputs
        body = sum(c.bytes for c in turns) + PART_OVERHEAD_BYTES * len(request)
        assert body <= lim.max_request_bytes


def test_a_request_is_filled_greedily():
    out = pack([[Cost(1, 10, 3)] * 5], Limits(max_embedding_inputs=7), multi=False)
    assert [(r[0].start, r[0].end) for r in out] == [(0, 2), (2, 4), (4, 5)]


def test_ids_are_stable_and_given_ones_kept():
    session = {"session_id": "s", "turns": [{"content": "a"}, {"id": "x", "content": "b"},
                                            {"content": "c"}]}  # fmt: skip
    assert [t["id"] for t in with_ids(session)["turns"]] == ["s#0", "x", "s#2"]
    assert with_ids(session) == with_ids(session)


def test_a_long_session_is_sent_in_parts_with_its_id():
    turns = [{"role": "user", "content": f"line {i}"} for i in range(2_500)]
    bodies = requests_of([{"session_id": "big", "stage": "x", "turns": turns}])
    assert [len(b["turns"]) for b in bodies] == [1_000, 1_000, 500]
    assert {b["session_id"] for b in bodies} == {"big"} and bodies[2]["stage"] == "x"
    assert bodies[2]["turns"][0]["id"] == "big#2000"


def test_the_estimate_counts_chunks_of_a_long_text():
    assert estimate_inputs("short", "Ana", 256) == 1
    assert estimate_inputs("x" * 240, None, 256) == 1
    assert estimate_inputs("x" * 480, None, 256) == 1  # (256 - 16) * 2 characters a chunk
    assert estimate_inputs("x" * 481, None, 256) == 2
    assert estimate_inputs("x" * 48_000, None, 256) == 100


def test_the_harness_sends_a_long_session_in_parts():
    """benchmarks' ingest batches: 2,000 turns a call at most, and within the texts embedded."""
    from benchmarks.mnemograph import ingest_batches
    from benchmarks.sut import CorpusSession, CorpusTurn

    def session(sid: str, n: int, size: int) -> CorpusSession:
        turns = [CorpusTurn(f"{sid}:{i}", "user", "Ana", "x" * size) for i in range(n)]
        return CorpusSession(sid, tuple(turns))

    sessions = [session("a", 1_500, 10), session("b", 300, 2_000)]  # b: 5 inputs a turn
    batches = ingest_batches(sessions, 2_000, Limits(max_embedding_inputs=1_000))
    assert [[(s.id, len(s.turns)) for s in b] for b in batches] == [
        [("a", 900)],
        [("a", 600), ("b", 60)],
        [("b", 180)],
        [("b", 60)],
    ]  # 900 inputs a call (a tenth to spare)
    assert [t.id for b in batches for s in b for t in s.turns] == [
        t.id for s in sessions for t in s.turns
    ]
    roomy = ingest_batches(sessions, 2_000, Limits(max_embedding_inputs=100_000))
    assert [[(s.id, len(s.turns)) for s in b] for b in roomy] == [
        [("a", 1_000)],
        [("a", 500), ("b", 300)],
    ]  # a session's part: 1,000 turns at most (the server's per-session limit)

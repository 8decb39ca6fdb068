"""Undo and revert restore the exact prior state (full property maps and edges), explicit
corrections work, and undone/reverted pairs are not redone by the jobs."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pipelines.consolidate.merge import list_merges, undo_merge
from pipelines.consolidate.runner import run_job
from pipelines.consolidate.supersessions import (
    SupersedeRequest,
    list_supersessions,
    memory_timeline,
    revert_supersession,
    supersede_memory,
)
from pipelines.errors import Conflict, NotFound
from pipelines.ingest.service import Ingestor
from tests.integration.test_consolidate_jobs import (
    BIOGRAPHY,
    NOW,
    diff,
    ingest,
    snapshot,
    status_of,
)


@pytest.fixture
def bio(engine, space):
    ingest(engine, space, BIOGRAPHY)
    return space


def correct(engine, space, memory_id, **request):
    """An explicit correction, as the API makes it."""
    body = SupersedeRequest.model_validate(request)
    return supersede_memory(engine, Ingestor(engine), space, memory_id, body)


def domain(engine, space):
    """The memory graph without audit records (Merge) and run bookkeeping (Space node)."""
    return snapshot(engine, space, audit=False, space_node=False)


def test_merge_undo_restores_exactly_and_is_not_redone(engine, bio):
    before = domain(engine, bio)
    run = run_job(engine, bio, "merge", now=NOW)
    assert run.counts["merged"] == 1
    merged = domain(engine, bio)
    assert diff(before, merged)  # the merge changed something
    canonical = merged[(("Memory",), "s1#3")][0]
    assert canonical["restatements"] == 1
    dup_edges = merged[(("Memory",), "s2#2")][1]
    assert any(e[0] == "MERGED_INTO" and e[3] == "s1#3" for e in dup_edges)
    [merge] = list_merges(engine, bio)
    result = undo_merge(engine, bio, merge.id)
    assert result.restored == 1 and result.kept_changed_properties == []
    assert diff(before, domain(engine, bio)) == []
    assert list_merges(engine, bio, status="undone")[0].id == merge.id
    with pytest.raises(Conflict):
        undo_merge(engine, bio, merge.id)
    with pytest.raises(NotFound):
        undo_merge(engine, bio, "merge-nope")
    # the job does not merge the same pair again
    from pipelines.consolidate.config import ConsolidationConfig

    again = run_job(engine, bio, "merge", now=NOW, config=ConsolidationConfig())
    assert again.counts.get("merged", 0) == 0
    assert diff(before, domain(engine, bio)) == []


def test_merge_undo_keeps_counters_changed_since(engine, bio):
    run_job(engine, bio, "merge", now=NOW)
    [merge] = list_merges(engine, bio)
    engine.store.write(
        "recall/touch", space=bio, rows=[{"id": "s1#3", "heat": 0.99}], now=NOW
    )  # recalled after the merge
    result = undo_merge(engine, bio, merge.id)
    assert set(result.kept_changed_properties) == {"access_count", "heat"}
    assert status_of(engine, bio, ["s2#2"]) == {"s2#2": "active"}


def test_automatic_supersessions_revert_exactly(engine, bio):
    before = domain(engine, bio)
    run_job(engine, bio, "supersede", now=NOW)
    sups = list_supersessions(engine, bio)
    assert {(s.kind, s.older, s.newer) for s in sups} == {
        ("memory", "s1#2", "s2#1"),
        ("memory", "s2#0", "s3#0"),
        ("fact", "s1#0#f0", "s2#0#f0"),
    }
    assert all(s.by == "job:supersede" for s in sups)
    for s in sups:
        out = revert_supersession(engine, bio, s.id)
        assert out.reverted is True
    assert diff(before, domain(engine, bio)) == []
    with pytest.raises(NotFound):
        revert_supersession(engine, bio, sups[0].id)
    # reverted pairs are remembered: the job proposes none of them again
    again = run_job(engine, bio, "supersede", now=NOW)
    assert again.counts["planned_memory"] == 0 and again.counts["planned_fact"] == 0
    assert diff(before, domain(engine, bio)) == []


def test_explicit_correction_by_memory_and_revert(engine, bio):
    before = domain(engine, bio)
    out = correct(engine, bio, "s1#0", by_memory_id="s3#0", reason="Ann moved to Tokyo")
    assert out.older == "s1#0" and out.created_memory is None
    assert out.fact_ids  # its facts were retired with it
    assert status_of(engine, bio, ["s1#0"]) == {"s1#0": "superseded"}
    chain = memory_timeline(engine, bio, "s1#0")
    assert [c.id for c in chain] == ["s1#0", "s3#0"]
    assert chain[1].supersedes[0].reason == "Ann moved to Tokyo"
    assert chain[1].supersedes[0].by == "api"
    with pytest.raises(Conflict):  # already superseded
        correct(engine, bio, "s1#0", by_memory_id="s2#0", reason="again")
    revert_supersession(engine, bio, out.id)
    assert diff(before, domain(engine, bio)) == []


def test_explicit_correction_by_content(engine, bio):
    before = domain(engine, bio)
    out = correct(
        engine, bio, "s1#2", content="My favourite colour is purple.", reason="user corrected"
    )
    new_id = out.created_memory
    assert new_id and out.newer == new_id
    state = domain(engine, bio)
    props = state[(("Memory",), new_id)][0]
    assert props["speaker"] == "Ann" and props["role"] == "user" and props["status"] == "active"
    assert status_of(engine, bio, ["s1#2"]) == {"s1#2": "superseded"}
    reverted = revert_supersession(engine, bio, out.id)
    assert reverted.archived_created_memory == new_id
    after = domain(engine, bio)
    # the superseded memory and its facts are exactly as before; the correction is archived
    for key, value in before.items():
        if key[0] == ("Memory",) or key[0] == ("Fact",):
            assert after[key] == value, key
    assert after[(("Memory",), new_id)][0]["status"] == "archived"


def test_correction_errors(engine, bio):
    for bad in (
        {"reason": "x"},  # neither
        {"by_memory_id": "s3#0", "content": "y", "reason": "x"},  # both
        {"by_memory_id": "s3#0", "reason": " "},  # a blank reason
    ):
        with pytest.raises(ValidationError):
            SupersedeRequest.model_validate(bad)
    with pytest.raises(Conflict):  # a memory never supersedes itself (409, like the API)
        correct(engine, bio, "s1#0", by_memory_id="s1#0", reason="x")
    with pytest.raises(NotFound):
        correct(engine, bio, "nope", by_memory_id="s3#0", reason="x")
    with pytest.raises(NotFound):
        correct(engine, bio, "s1#0", by_memory_id="nope", reason="x")
    correct(engine, bio, "s2#0", by_memory_id="s3#0", reason="moved on")
    with pytest.raises(Conflict):  # the newer memory must be active
        correct(engine, bio, "s1#0", by_memory_id="s2#0", reason="x")

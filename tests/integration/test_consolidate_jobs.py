"""Consolidation jobs against a real Neo4j + GDS: what each job changes, that dry runs change
nothing, idempotency, the lease, crash-then-rerun, stage id stability, space isolation."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from pipelines import spaces
from pipelines.consolidate.config import JOB_NAMES
from pipelines.consolidate.lease import acquire_lease
from pipelines.consolidate.runner import Runner, list_runs, run_full_pass, run_job
from pipelines.errors import Busy, NotFound
from pipelines.ingest.service import Ingestor, MemoryIn, SessionIn, TurnIn
from tests.cypher import statements

T0 = datetime(2024, 1, 1, 9, tzinfo=UTC)
NOW = datetime(2024, 6, 1, tzinfo=UTC)

BIOGRAPHY = [
    (
        "s1",
        0,
        [
            ("user", "Ann", "I live in Paris and I love the Louvre."),
            ("assistant", "Bot", "Paris is lovely! Have you been to the Musée d'Orsay?"),
            ("user", "Ann", "My favourite colour is blue."),
            ("user", "Ann", "I went to the support group yesterday and it was so powerful."),
        ],
    ),
    (
        "s2",
        31,
        [
            ("user", "Ann", "Guess what, I moved to Berlin last month!"),
            ("user", "Ann", "My favourite colour is green now."),
            ("user", "Ann", "I went to the support group yesterday, and it was so powerful!"),
        ],
    ),
    ("s3", 60, [("user", "Ann", "I moved to Tokyo for a new job at Sony.")]),
]

TOPICS = {
    "travel": [
        "We are planning the trip to Barcelona to see the Sagrada Familia.",
        "Gaudi designed the Sagrada Familia in Barcelona.",
        "I booked a hotel in Barcelona near Park Guell.",
        "Park Guell by Gaudi is on our Barcelona list.",
    ],
    "work": [
        "Satya Nadella announced new Azure features at Microsoft Build.",
        "Our team migrates to Azure next quarter, Microsoft offered credits.",
        "Microsoft Build had a session on Azure pricing.",
        "I asked Microsoft support about Azure quotas.",
    ],
    "music": [
        "The Vienna Philharmonic played Beethoven last night.",
        "Beethoven's ninth symphony with the Vienna Philharmonic was stunning.",
        "I bought tickets for the Vienna Philharmonic in Salzburg.",
        "Salzburg festival features Beethoven and Mozart.",
    ],
}


def ingest(engine, space, sessions):
    payload = [
        SessionIn(
            sid,
            [
                TurnIn(role, text, speaker=speaker, time=T0 + timedelta(days=day, minutes=i))
                for i, (role, speaker, text) in enumerate(turns)
            ],
        )
        for sid, day, turns in sessions
    ]
    return Ingestor(engine).ingest_sessions(space, payload)


def topic_sessions(rounds=2, start_day=0):
    out, day = [], start_day
    for rnd in range(rounds):
        for topic, lines in TOPICS.items():
            turns = [
                (
                    "user" if i % 2 == 0 else "assistant",
                    "Ann" if i % 2 == 0 else "Bot",
                    lines[(i + rnd) % 4],
                )
                for i in range(4)
            ]
            out.append((f"{topic}-{rnd + start_day}", day, turns))
            day += 2
    return out


def snapshot(engine, space, audit=True, space_node=True):
    """Every node of the space keyed by (label, id), with properties and outgoing edges."""
    state = {}
    for r in statements(engine.store).read("consolidate/space_state", space=space):
        labels = tuple(sorted(r["labels"]))
        if not audit and "Merge" in labels:
            continue
        if not space_node and "Space" in labels:
            continue
        props = r["props"]
        key = (labels, props.get("id") or props.get("key"))
        edges = sorted(
            (e[0], tuple(sorted(e[1].items())), tuple(e[2]), e[3]) for e in r["out"] if e
        )
        state[key] = (props, edges)
    return state


def diff(a, b):
    changed = sorted(str(k) for k in set(a) | set(b) if a.get(k) != b.get(k))
    return changed[:10]


def status_of(engine, space, ids):
    out = {}
    for mid in ids:
        rows = engine.store.read("consolidate/memory_brief", space=space, id=mid)
        out[mid] = rows[0]["status"] if rows else None
    return out


@pytest.fixture
def bio(engine, space):
    ingest(engine, space, BIOGRAPHY)
    return space


@pytest.fixture
def topics(engine, space):
    ingest(engine, space, topic_sessions())
    return space


# ------------------------------------------------------------------ every job


@pytest.mark.parametrize("job", JOB_NAMES)
def test_dry_run_changes_nothing(engine, topics, job):
    ingest(engine, topics, BIOGRAPHY)
    before = snapshot(engine, topics)
    run = run_job(engine, topics, job, dry_run=True, now=NOW)
    assert run.status == "ok" and run.dry_run is True, run
    assert run.counts, run  # it reported what it would do
    assert diff(before, snapshot(engine, topics)) == []


def test_full_pass_is_idempotent_and_reports_timings(engine, topics):
    ingest(engine, topics, BIOGRAPHY)
    first = run_full_pass(engine, topics, now=NOW)
    assert set(first.jobs) == set(JOB_NAMES)
    assert all(j.status == "ok" for j in first.jobs.values()), first
    assert all(j.seconds >= 0 for j in first.jobs.values())
    assert first.jobs["merge"].counts["merged"] == 1
    assert first.jobs["supersede"].counts["superseded_memory"] == 2
    assert first.jobs["communities"].counts["stages"] >= 3
    state = snapshot(engine, topics, space_node=False)
    second = run_full_pass(engine, topics, now=NOW)
    assert all(j.status == "ok" for j in second.jobs.values()), second
    counts = {job: j.counts for job, j in second.jobs.items()}
    assert counts["merge"].get("merged", 0) == 0
    assert counts["supersede"].get("superseded_memory", 0) == 0
    assert counts["communities"]["units_moved"] == 0
    assert counts["schemas"]["refreshed"] == 0
    assert counts["upkeep"]["weights_set"] == 0
    assert counts["decay"].get("updated", 0) == 0  # same `now`: nothing moved
    assert diff(state, snapshot(engine, topics, space_node=False)) == []


def test_runs_are_recorded(engine, bio):
    run = run_job(engine, bio, "decay", now=NOW)
    assert run.status == "ok" and run.counts["updated"] == 8
    assert run.started_at and run.ended_at and run.duration_ms >= 0
    runs = list_runs(engine, bio)
    assert runs[0].id == run.id and runs[0].job == "decay"
    assert list_runs(engine, bio, "merge") == []
    with pytest.raises(NotFound):
        run_job(engine, bio, "nope")
    with pytest.raises(NotFound):
        run_job(engine, "no-such-space", "decay")


# ------------------------------------------------------------------ individual jobs


def test_decay_sets_stage_parameters_not_the_lazy_base(engine, bio):
    before = snapshot(engine, bio)
    run_job(engine, bio, "decay", now=NOW)
    after = snapshot(engine, bio)
    for key, (props, _) in after.items():
        if "Memory" not in key[0]:
            continue
        old = before[key][0]
        assert props["heat"] == old["heat"] and props.get("last_access") == old.get("last_access")
        # ingested moments ago: labile, twice the base rate, no floor
        assert props["consolidation_stage"] == "labile"
        assert props["decay_rate"] == pytest.approx(0.2) and props["heat_floor"] == 0.0
        assert 0.0 <= props["heat_current"] <= 1.0


def test_merge_collapses_the_near_duplicate(engine, bio):
    run = run_job(engine, bio, "merge", now=NOW)
    assert run.counts["merged"] == 1, run
    assert status_of(engine, bio, ["s1#3", "s2#2"]) == {"s1#3": "active", "s2#2": "merged"}
    merge = run.sample[0]
    assert merge["canonical"] == "s1#3" and merge["duplicates"] == ["s2#2"]
    # incremental: nothing new since the watermark, nothing compared
    from pipelines.consolidate.config import ConsolidationConfig, MergeConfig

    no_margin = ConsolidationConfig(merge=MergeConfig(recheck_margin_seconds=0))
    run_job(engine, bio, "merge", now=NOW, config=no_margin)
    again = run_job(engine, bio, "merge", now=NOW, config=no_margin)
    assert again.counts["checked"] == 0 and again.counts.get("merged", 0) == 0


def test_supersede_keeps_the_latest_truth_and_the_chain(engine, bio):
    run = run_job(engine, bio, "supersede", now=NOW)
    assert run.counts["superseded_memory"] == 2 and run.counts["superseded_fact"] == 1
    st = status_of(engine, bio, ["s1#0", "s1#2", "s2#0", "s2#1", "s3#0"])
    # s1#0 also says "I love the Louvre": only its residence fact is retired
    assert st == {
        "s1#0": "active",
        "s1#2": "superseded",
        "s2#0": "superseded",
        "s2#1": "active",
        "s3#0": "active",
    }
    from pipelines.consolidate.supersessions import memory_timeline

    chain = memory_timeline(engine, bio, "s3#0")
    assert [c.id for c in chain] == ["s2#0", "s3#0"]
    assert chain[1].supersedes[0].older == "s2#0"
    assert chain[1].supersedes[0].reason == "i:residence: Berlin -> Tokyo"
    facts = {
        f["id"]: f
        for f in engine.store.read("consolidate/supersede_facts", space=bio, ids=["s1#0"])
    }
    assert "s1#0#f0" not in facts  # the residence fact is no longer active


def test_knowledge_update_latest_value_wins(engine, space):
    """A value stated, then changed twice: only the latest stays active, the chain is intact,
    and recall (which filters status='active') puts the latest value first."""
    ing = Ingestor(engine)
    for i, text in enumerate(
        [
            "My favourite colour is blue.",
            "My favourite colour is red now.",
            "My favourite colour is green these days.",
        ]
    ):
        ing.add_memories(
            space,
            [
                MemoryIn(
                    text, id=f"c{i}", speaker="Ann", role="user", time=T0 + timedelta(days=30 * i)
                )
            ],
        )
    recall = pytest.importorskip("pipelines.recall.service")
    question = recall.RecallRequest(query="What is Ann's favourite colour?", touch=False)
    without = recall.Recaller(engine).recall(space, question)
    assert {h.id for h in without.results} == {"c0", "c1", "c2"}  # every version competes
    run_job(engine, space, "supersede", now=NOW)
    assert status_of(engine, space, ["c0", "c1", "c2"]) == {
        "c0": "superseded",
        "c1": "superseded",
        "c2": "active",
    }
    from pipelines.consolidate.supersessions import memory_timeline

    chain = memory_timeline(engine, space, "c0")
    assert [c.id for c in chain] == ["c0", "c1", "c2"]
    assert [e.older for c in chain for e in c.supersedes] == ["c0", "c1"]
    res = recall.Recaller(engine).recall(space, question)
    assert res.results and res.results[0].id == "c2"
    assert {h.id for h in res.results} == {"c2"}


def test_communities_form_topical_stages_with_stable_ids(engine, topics):
    run = run_job(engine, topics, "communities", now=NOW)
    assert run.counts["stages"] == 3 and run.counts["units_moved"] == 6, run
    sessions = {
        r["id"]: r["stage"]
        for r in engine.store.read("consolidate/community_sessions", space=topics)
    }
    for topic in TOPICS:
        assert sessions[f"{topic}-0"] == sessions[f"{topic}-1"]
        assert sessions[f"{topic}-0"].startswith("community:")
    assert len(set(sessions.values())) == 3
    stages = engine.store.read("consolidate/community_stages", space=topics)
    assert {s["kind"] for s in stages} == {"community"}  # emptied gap stages are gone
    # rerun: nothing moves, same ids
    again = run_job(engine, topics, "communities", now=NOW)
    assert again.counts["units_moved"] == 0 and again.counts["stages_reused"] == 3
    # a little more of one topic: ids stay, the new session joins its topic
    ingest(engine, topics, topic_sessions(rounds=1, start_day=40)[:1])
    grown = run_job(engine, topics, "communities", now=NOW)
    assert grown.counts["stages_reused"] == 3 and grown.counts["stages_new"] == 0
    after = {
        r["id"]: r["stage"]
        for r in engine.store.read("consolidate/community_sessions", space=topics)
    }
    assert {k: after[k] for k in sessions} == sessions
    assert after["travel-40"] == sessions["travel-0"]


def test_communities_leave_explicitly_labelled_spaces_alone(engine, space):
    Ingestor(engine).ingest_sessions(
        space,
        [
            SessionIn(f"x{i}", [TurnIn("user", line, time=T0 + timedelta(days=i))], stage="proj")
            for i, line in enumerate(TOPICS["travel"] * 3)
        ],
    )
    before = snapshot(engine, space)
    run = run_job(engine, space, "communities", now=NOW)
    assert run.counts == {"skipped_explicit_labels": 1}
    assert diff(before, snapshot(engine, space)) == []


def test_schemas_are_built_cached_and_refreshed(engine, topics):
    from pipelines.consolidate.schemas import ensure_schema

    run = run_job(engine, topics, "schemas", now=NOW)
    assert run.counts["refreshed"] == 6  # one per gap stage
    stage = {
        r["id"]: r["stage"]
        for r in engine.store.read("consolidate/community_sessions", space=topics)
    }["travel-0"]
    cached = ensure_schema(engine, topics, stage)
    assert cached.rebuilt is False and cached.memory_count == 4
    assert "Barcelona" in cached.entities and cached.summary
    assert len(cached.embedding) == engine.embedder.dimensions
    # the stage changes (a memory is superseded): the schema is stale and rebuilt on demand
    statements(engine.store).write(
        "recall/set_status", space=topics, id="travel-0#0", status="superseded"
    )
    rebuilt = ensure_schema(engine, topics, stage)
    assert rebuilt.rebuilt is True and rebuilt.memory_count == 3
    assert run_job(engine, topics, "schemas", now=NOW).counts["refreshed"] == 0
    with pytest.raises(NotFound):
        ensure_schema(engine, topics, "gap:nope")


def test_several_schemas_in_one_batch(engine, topics):
    """``ensure_schemas`` (the assembler's Phase 3) answers for several stages at once, as
    ``ensure_schema`` does for each; only the stale ones are rebuilt; unknown ids are absent."""
    from pipelines.consolidate.records import StageSchema
    from pipelines.consolidate.schemas import ensure_schema, ensure_schemas

    run_job(engine, topics, "schemas", now=NOW)
    stages = sorted(
        {r["stage"] for r in engine.store.read("consolidate/community_sessions", space=topics)}
    )
    assert len(stages) >= 3
    statements(engine.store).write(  # one stage goes stale
        "recall/set_status", space=topics, id="travel-1#0", status="superseded"
    )
    stale = {
        r["id"]: r["stage"]
        for r in engine.store.read("consolidate/community_sessions", space=topics)
    }["travel-1"]
    got = ensure_schemas(engine, topics, [*stages, "gap:nope"])
    assert set(got) == set(stages)
    assert {sid for sid, sc in got.items() if sc["rebuilt"]} == {stale}
    for sid in stages:
        one = ensure_schema(engine, topics, sid)
        assert one.rebuilt is False
        assert one.model_dump(exclude={"rebuilt"}) == StageSchema.model_validate(
            got[sid]
        ).model_dump(exclude={"rebuilt"})
    assert ensure_schemas(engine, topics, []) == {}


def test_upkeep_recounts_weights_and_projects_the_entity_graph(engine, topics):
    from pipelines.consolidate.upkeep import ensure_entity_projection

    name = ensure_entity_projection(engine, topics)
    assert name and name.startswith(f"mnemograph/entities/{topics}/")
    assert ensure_entity_projection(engine, topics) == name  # fresh: reused
    # retire every memory of one session: its co-occurrences lose support
    for i in range(4):
        statements(engine.store).write(
            "recall/set_status", space=topics, id=f"travel-0#{i}", status="archived"
        )
    run = run_job(engine, topics, "upkeep", now=NOW)
    assert run.counts["weights_set"] + run.counts["edges_deleted"] > 0
    new_name = ensure_entity_projection(engine, topics)
    assert new_name != name  # weights changed: a new projection
    rows = engine.store.read("consolidate/graph_exists", graph=new_name)
    assert rows[0]["exists"] is True
    again = run_job(engine, topics, "upkeep", now=NOW)
    assert again.counts["weights_set"] == 0 and again.counts["edges_deleted"] == 0
    assert ensure_entity_projection(engine, topics) == new_name


def test_retention_archives_old_turns_and_keeps_facts(engine, client, bio):
    assert run_job(engine, bio, "retention", now=NOW).counts == {"no_policy": 1}
    client.delete(f"/v1/spaces/{bio}")  # recreate with a policy
    spaces.create(
        engine.store, spaces.NewSpace(id=bio, settings={"retention": {"archive_after_days": 130}})
    )
    ingest(engine, bio, BIOGRAPHY)
    facts_before = engine.store.read("consolidate/supersede_facts", space=bio, ids=["s1#0", "s1#2"])
    dry = run_job(engine, bio, "retention", now=NOW)  # dry run by default
    assert dry.dry_run is True and dry.counts["to_archive"] == 4  # s1 is > 120 days old
    assert status_of(engine, bio, ["s1#0"]) == {"s1#0": "active"}
    real = run_job(engine, bio, "retention", dry_run=False, now=NOW)
    assert real.counts["archived"] == 4
    assert status_of(engine, bio, ["s1#0", "s2#0"]) == {"s1#0": "archived", "s2#0": "active"}
    facts_after = engine.store.read("consolidate/supersede_facts", space=bio, ids=["s1#0", "s1#2"])
    assert facts_after == facts_before  # facts stay active


def test_retention_deletes_archived_turns_and_their_text_from_session_documents(
    engine, client, bio
):
    client.delete(f"/v1/spaces/{bio}")  # recreate with a policy that also deletes
    policy = {"archive_after_days": 130, "delete_archived_after_days": 5}
    spaces.create(engine.store, spaces.NewSpace(id=bio, settings={"retention": policy}))
    ingest(engine, bio, BIOGRAPHY)
    before = {
        r["id"]: r["texts"]
        for r in statements(engine.store).read("ingest/read_session_documents", space=bio)
    }
    assert len(before["s1"]) == 4
    run_job(engine, bio, "retention", dry_run=False, now=NOW)  # archives s1
    archived = {
        r["id"]: r["texts"]
        for r in statements(engine.store).read("ingest/read_session_documents", space=bio)
    }
    assert archived == before  # archived memories still exist: their texts stay
    later = run_job(engine, bio, "retention", dry_run=False, now=NOW + timedelta(days=10))
    assert later.counts["deleted"] == 4
    after = {
        r["id"]: r["texts"]
        for r in statements(engine.store).read("ingest/read_session_documents", space=bio)
    }
    assert after == {**before, "s1": []}  # the deleted texts left s1's document; s2 untouched


# ------------------------------------------------------------------ lease, crash, isolation


def test_lease_is_exclusive_until_it_expires(engine, bio):
    held = acquire_lease(engine.store, bio, "merge", "runner-a", ttl_seconds=2)
    assert held is not None
    assert acquire_lease(engine.store, bio, "merge", "runner-b", ttl_seconds=2) is None
    with pytest.raises(Busy):
        run_job(engine, bio, "merge")
    assert acquire_lease(engine.store, bio, "decay", "runner-b") is not None  # other job: free
    time.sleep(2.5)
    taken = acquire_lease(engine.store, bio, "merge", "runner-b", ttl_seconds=60)
    assert taken is not None and taken.holder == "runner-b"
    taken.release()
    assert acquire_lease(engine.store, bio, "merge", "runner-c") is not None


def test_a_crashed_runners_run_is_marked_interrupted(engine, bio):
    acquire_lease(engine.store, bio, "decay", "dead-runner", ttl_seconds=1)
    engine.store.write(
        "consolidate/jobrun_start",
        id=f"dead-{bio}",
        space=bio,
        job="decay",
        dry_run=False,
        started_at=datetime.now(UTC),
        holder="dead-runner",
        trigger="test",
    )  # ... and then the process died
    with pytest.raises(Busy):
        run_job(engine, bio, "decay")
    time.sleep(1.5)
    assert run_job(engine, bio, "decay", now=NOW).status == "ok"
    runs = {r.id: r.status for r in list_runs(engine, bio, "decay")}
    assert runs[f"dead-{bio}"] == "interrupted"


class Crash(RuntimeError):
    pass


def crash_at(label_prefix):
    def hook(label):
        if label.startswith(label_prefix):
            raise Crash(f"simulated crash at {label}")

    return hook


@pytest.mark.parametrize(
    ("job", "point"),
    [
        ("supersede", "supersede:write:1"),
        ("merge", "merge:candidates"),
        ("communities", "communities:sessions:0"),
        ("schemas", "schemas:0"),
    ],
)
def test_crash_then_rerun_completes_the_work(engine, topics, job, point):
    ingest(engine, topics, BIOGRAPHY)
    # reference: the same data in a second space, run without a crash
    ref = topics + "-ref"
    spaces.create(engine.store, spaces.NewSpace(id=ref))
    try:
        ingest(engine, ref, topic_sessions())
        ingest(engine, ref, BIOGRAPHY)
        run_job(engine, ref, job, now=NOW)
        crashed = run_job(engine, topics, job, now=NOW, runner=Runner(failure_hook=crash_at(point)))
        assert crashed.status == "failed" and "simulated crash" in crashed.errors[0]
        # the lease was released, the next run completes
        done = run_job(engine, topics, job, now=NOW)
        assert done.status == "ok", done

        def shape(space):
            statuses = {
                k[1]: (v[0].get("status"), v[0].get("stage_id"))
                for k, v in snapshot(engine, space).items()
                if "Memory" in k[0]
            }
            stages = sorted(
                r["id"] for r in engine.store.read("consolidate/community_stages", space=space)
            )
            edges = sorted(
                (k[1], e[0])
                for k, v in snapshot(engine, space).items()
                for e in v[1]
                if e[0] in ("SUPERSEDES", "MERGED_INTO", "SUMMARIZES")
            )
            return statuses, stages, edges

        assert shape(topics) == shape(ref)
    finally:
        spaces.delete(engine.store, ref)


def test_jobs_never_touch_other_spaces(engine, topics, client):
    other = topics + "-other"
    spaces.create(engine.store, spaces.NewSpace(id=other))
    try:
        ingest(engine, other, topic_sessions())
        ingest(engine, other, BIOGRAPHY)
        ingest(engine, topics, BIOGRAPHY)
        before = snapshot(engine, other)
        report = run_full_pass(engine, topics, now=NOW)
        assert report.jobs["merge"].counts["merged"] == 1
        run_job(engine, topics, "retention", dry_run=False, now=NOW)
        assert diff(before, snapshot(engine, other)) == []
        assert list_runs(engine, other) == []
    finally:
        spaces.delete(engine.store, other)


def test_scheduler_runs_what_is_due_once(engine, bio):
    from pipelines.consolidate.config import ConsolidationConfig, SchedulerConfig
    from pipelines.consolidate.scheduler import Scheduler

    cfg = ConsolidationConfig(
        scheduler=SchedulerConfig(intervals_seconds=(("decay", 3600.0), ("merge", None)))
    )
    sched = Scheduler(engine, cfg, space_ids=[bio])
    assert sched.tick() == [(bio, "decay", "ok")]
    assert sched.tick() == []  # not due again yet
    sched.start()
    assert sched.running
    sched.stop()
    assert not sched.running


def test_decay_stages_follow_replays_and_schema_congruence(engine, topics):
    run_job(engine, topics, "schemas")
    later = datetime.now(UTC) + timedelta(days=2)
    touched = ["travel-0#0", "travel-0#1"]
    engine.store.write(
        "recall/touch",
        space=topics,
        rows=[{"id": m, "heat": 1.0} for m in touched],
        now=datetime.now(UTC),
    )
    # travel-0#1 mentions a key entity of its stage's schema; make travel-0#0 mention none
    statements(engine.store).write("consolidate/drop_mentions", space=topics, id="travel-0#0")
    run_job(engine, topics, "decay", now=later)
    state = snapshot(engine, topics)
    stage = {k[1]: v[0]["consolidation_stage"] for k, v in state.items() if "Memory" in k[0]}
    assert stage["travel-0#1"] == "consolidated"  # one replay suffices when congruent
    assert stage["travel-0#0"] == "late"  # one replay, not congruent
    assert stage["travel-0#2"] == "early"  # two days old, never recalled
    rate = state[(("Memory",), "travel-0#1")][0]["decay_rate"]
    assert rate == pytest.approx(0.05) and state[(("Memory",), "travel-0#1")][0][
        "heat_floor"
    ] == pytest.approx(0.10)

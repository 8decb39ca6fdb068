"""Stage schema building (pure)."""

import random
from datetime import UTC, datetime, timedelta

from pipelines.consolidate.config import SchemaConfig
from pipelines.consolidate.schemas import (
    StageEntity,
    StageFact,
    StageMemory,
    build_schema,
    fingerprint,
)

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)


def fixture():
    mems = [
        StageMemory(
            "m1",
            "We decided to use Neo4j for the graph.",
            "Ann",
            "user",
            T0,
            "s1",
            0,
            ("neo4j", "ann"),
        ),
        StageMemory(
            "m2", "Should we use GDS Leiden for communities?", "Ann", "user", T0, "s1", 1, ("gds",)
        ),
        StageMemory(
            "m3",
            "Where do we deploy the Neo4j cluster?",
            "Ann",
            "user",
            T0 + timedelta(days=1),
            "s2",
            0,
            ("neo4j",),
        ),
        StageMemory(
            "m4",
            "Yes, GDS Leiden works well for communities.",
            "Bob",
            "assistant",
            T0 + timedelta(days=1),
            "s2",
            1,
            ("gds",),
        ),
        StageMemory(
            "m5",
            "I fixed the import bug in Neo4j.",
            "Ann",
            "user",
            T0 + timedelta(days=2),
            "s3",
            0,
            ("neo4j",),
        ),
    ]
    facts = [
        StageFact("m1#f0", "m1", "decision", "We decided to use Neo4j for the graph", "Ann"),
        StageFact("m2#f0", "m2", "question", "Should we use GDS Leiden for communities?", "Ann"),
        StageFact("m3#f0", "m3", "question", "Where do we deploy the Neo4j cluster?", "Ann"),
        StageFact("m5#f0", "m5", "fact", "I fixed the import bug in Neo4j", "Ann"),
    ]
    ents = [StageEntity("neo4j", "Neo4j"), StageEntity("gds", "GDS"), StageEntity("ann", "Ann")]
    return mems, facts, ents


def test_schema_fields():
    mems, facts, ents = fixture()
    s = build_schema(mems, facts, ents, stage_id="gap:1", stage_name="graph work")
    assert s.entities == ["Neo4j", "GDS"]  # by mentions; the speaker "Ann" is left out
    assert s.decisions == ["We decided to use Neo4j for the graph"]
    assert s.outcomes == ["I fixed the import bug in Neo4j"]
    # the Leiden question was answered by Bob; the deployment one was not
    assert s.open_questions == ["Where do we deploy the Neo4j cluster?"]
    assert s.memory_count == 5 and s.session_count == 3 and s.speakers == ["Ann", "Bob"]
    assert s.summary.startswith("graph work: 5 memories in 3 sessions, 2024-03-01 to 2024-03-03.")
    assert "Key entities: Neo4j, GDS." in s.summary


def test_deterministic_and_bounded():
    mems, facts, ents = fixture()
    a = build_schema(mems, facts, ents, stage_id="x")
    shuffled = mems[:]
    random.Random(3).shuffle(shuffled)
    b = build_schema(shuffled, list(reversed(facts)), ents[::-1], stage_id="x")
    assert a == b
    tiny = build_schema(mems, facts, ents, stage_id="x", config=SchemaConfig(max_summary_chars=100))
    assert len(tiny.summary) <= 100 and tiny.summary.endswith("…")


def test_fingerprint_changes_with_members():
    assert fingerprint("n", ["a:active:1", "b:active:0"]) == fingerprint(
        "n", ["b:active:0", "a:active:1"]
    )
    assert fingerprint("n", ["a:active:1"]) != fingerprint("n", ["a:superseded:1"])

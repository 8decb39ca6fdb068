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


def test_a_chat_summary_holds_no_greeting_nor_thanks():
    from pipelines.ingest.salience import analyse
    from pipelines.models.nlp import load_nlp

    said = [
        ("Caroline", "Hey Melanie! Long time no talk!"),
        ("Melanie", "Hey Caroline! Good to see you. How have things been?"),
        ("Caroline", "I went to an LGBTQ support group in Boston yesterday, it was powerful."),
        ("Melanie", "Wow, Caroline! That sounds amazing."),
        ("Caroline", "I decided to research adoption agencies next month."),
        ("Melanie", "Congrats, Caroline! What made you choose adoption agencies?"),
        ("Caroline", "Thanks, Mel."),
        ("Melanie", "Thanks, Caroline! Family time matters to me, I took the kids camping."),
    ]
    mems = [
        StageMemory(f"m{i}", text, who, "user", T0, "s1", i, keys)
        for i, ((who, text), keys) in enumerate(
            zip(
                said,
                [("mel",), (), ("lgbtq", "boston"), ("caroline",), (), ("congrats",), ("mel",), ()],
                strict=True,
            )
        )
    ]
    facts = [
        StageFact("m4#f0", "m4", "decision", "I decided to research adoption agencies", "Caroline"),
        StageFact("m1#f0", "m1", "question", "How have things been?", "Melanie"),
        StageFact("m6#f0", "m6", "fact", "Thanks, Mel.", "Caroline"),
    ]
    ents = [StageEntity("mel", "Mel"), StageEntity("congrats", "Congrats"),
            StageEntity("caroline", "Caroline"), StageEntity("lgbtq", "LGBTQ"),
            StageEntity("boston", "Boston")]  # fmt: skip
    nlp, _ = load_nlp()
    texts = [m.text for m in mems] + [f.text for f in facts]
    salience = dict(zip(texts, analyse(nlp, texts, ["Caroline", "Melanie"]), strict=True))
    s = build_schema(mems, facts, ents, stage_id="s", stage_name="chat", salience=salience)
    assert s.entities == ["Boston", "LGBTQ"]  # no "Mel", no "Congrats"
    assert s.open_questions == []  # "How have things been?" asks about nothing
    # a question the other party's next turn replies to is answered; a tag question asks
    # for agreement; one left without a reply is open
    tail = [
        StageMemory("q1", "Which agency did you pick in the end?", "Melanie", "user", T0, "s1", 8),
        StageMemory(
            "a1", "The one in Boston that helps LGBTQ folks.", "Caroline", "user", T0, "s1", 9
        ),
        StageMemory("q2", "Pottery is so calming, right?", "Melanie", "user", T0, "s1", 10),
        StageMemory("q3", "Who will sign the adoption papers?", "Melanie", "user", T0, "s2", 0),
    ]
    qs = [
        StageFact(f"{m.id}#f0", m.id, "question", m.text, m.speaker) for m in tail if m.id[0] == "q"
    ]
    more = [m.text for m in tail]
    salience.update(zip(more, analyse(nlp, more, ["Caroline", "Melanie"]), strict=True))
    s2 = build_schema([*mems, *tail], qs, ents, stage_id="s", salience=salience)
    assert s2.open_questions == ["Who will sign the adoption papers?"]
    assert s.decisions == ["I decided to research adoption agencies"]
    assert s.highlights[0].startswith("I went to an LGBTQ support group in Boston")
    for word in ("Hey", "Thanks", "Congrats", "Wow", "Long time"):
        assert word not in s.summary, (word, s.summary)
    # without salience the texts are read whole, as before
    plain = build_schema(mems, facts, ents, stage_id="s", stage_name="chat")
    assert plain.highlights and plain.memory_count == 8

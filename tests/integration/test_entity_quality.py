"""Entities a person would accept, against a real Neo4j: no greetings or interjections, and a
speaker's short forms merged into the speaker's entity by the entity_merge job, undoably.

The conversation is written for this test (LoCoMo-like: two friends, first names, greetings),
not taken from a dataset."""

from __future__ import annotations

import pytest

from pipelines import browse
from pipelines.consolidate.merge import get_merge, list_merges, undo_merge
from pipelines.consolidate.runner import run_job
from pipelines.errors import Conflict
from tests.integration.test_consolidate_jobs import NOW, diff, ingest, snapshot

CAROLINE, MELANIE = "Caroline", "Melanie"

CHAT = [
    (
        "s1",
        0,
        [
            ("user", CAROLINE, "Hey Melanie! Glad you made it. I went to the support group."),
            ("assistant", MELANIE, "Congrats, Caroline! That is big news. Oliver says hi."),
            ("user", CAROLINE, "Thanks, Mel! The pottery class was fun too."),
            ("assistant", MELANIE, "Glad to hear it. I took Oliver to the beach in Boston."),
            ("user", CAROLINE, "Wow, Mel, the painting of the sunset is great!"),
            ("assistant", MELANIE, "Thanks, Caro! I loved the parade. Bye Caroline, take care."),
        ],
    ),
    (
        "s2",
        3,
        [
            ("user", CAROLINE, "I told Mel about the adoption agency in Boston."),
            ("assistant", MELANIE, "Nah, it was nothing. Oliver and I are so glad for you."),
            ("user", CAROLINE, "Mel, you are so kind. Melanie, you rock."),
            ("assistant", MELANIE, "Congrats again, Caroline! Bye for now."),
        ],
    ),
]

JUNK = {"glad", "congrats", "bye caroline", "nah", "bye", "wow", "thanks"}


def keys(engine, space):
    return {e.key for e in browse.entities(engine.store, space, None, 0, 500)}


@pytest.fixture
def chat(engine, space):
    ingest(engine, space, CHAT)
    return space


def test_no_greetings_or_interjections_become_entities(engine, chat):
    found = keys(engine, chat)
    assert not found & JUNK, found
    assert {"caroline", "melanie", "mel", "oliver", "boston"} <= found, found


def test_short_forms_merge_into_the_speaker_reversibly(engine, chat):
    before = snapshot(engine, chat, audit=False, space_node=False)
    run = run_job(engine, chat, "entity_merge", now=NOW)
    assert run.status == "ok" and run.counts["merged"] >= 1, run
    merges = [m for m in list_merges(engine, chat) if m.kind == "entity"]
    by_alias = {m.duplicates[0]: m for m in merges}
    assert by_alias["mel"].canonical == "melanie", merges
    assert "said by others to speaker 'melanie'" in (by_alias["mel"].reason or "")
    # the alias is listed no more; its canonical carries it and answers for its key
    assert "mel" not in keys(engine, chat)
    [melanie] = browse.entities(engine.store, chat, "mel", 0, 10)
    assert melanie.key == "melanie" and "Mel" in melanie.aliases
    detail = browse.entity(engine.store, chat, "mel", 50)
    assert detail.entity.key == "melanie"
    said_mel = {"s1#2", "s1#4", "s2#0", "s2#2"}
    assert said_mel <= {m.id for m in detail.mentions}
    # undo restores the graph exactly and is not redone
    undone = undo_merge(engine, chat, by_alias["mel"].id)
    assert undone.status == "undone" and undone.restored == len(said_mel)
    for m in merges:
        if m.duplicates[0] != "mel":
            undo_merge(engine, chat, m.id)
    assert diff(before, snapshot(engine, chat, audit=False, space_node=False)) == []
    assert get_merge(engine, chat, by_alias["mel"].id).status == "undone"
    with pytest.raises(Conflict):
        undo_merge(engine, chat, by_alias["mel"].id)
    again = run_job(engine, chat, "entity_merge", now=NOW)
    assert again.counts.get("merged", 0) == 0, again


def test_a_merged_alias_is_written_to_its_canonical_later(engine, chat):
    run_job(engine, chat, "entity_merge", now=NOW)
    ingest(engine, chat, [("s3", 9, [("user", CAROLINE, "Thanks, Mel! See you at the beach.")])])
    detail = browse.entity(engine.store, chat, "melanie", 50)
    assert "s3#0" in {m.id for m in detail.mentions}
    edges = snapshot(engine, chat)[(("Memory",), "s3#0")][1]
    mentioned = {e[3] for e in edges if e[0] == "MENTIONS"}
    assert "melanie" in mentioned and "mel" not in mentioned, edges

"""Promotion of entity candidates and capped co-occurrence (pipelines.ingest.entity_graph)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.ingest.config import EntityConfig
from pipelines.ingest.entities import TECH_LABEL, EntityMention
from pipelines.ingest.entity_graph import Candidate, MemoryMentions, plan_entities, salience

T0 = datetime(2024, 3, 1, tzinfo=UTC)
CFG = EntityConfig()


def m(key: str, kind: str = TECH_LABEL, count: int = 1) -> EntityMention:
    return EntityMention(name=key, key=key, kind=kind, count=count)


def mem(mid: str, *mentions: EntityMention, day: int = 0) -> MemoryMentions:
    return MemoryMentions(mid, T0 + timedelta(days=day), list(mentions))


def test_an_identifier_seen_once_waits_as_a_candidate() -> None:
    plan = plan_entities([mem("a", m("fetchweather"))], {}, {}, 1, CFG)
    assert plan.entities == [] and plan.mentions == [] and plan.pairs == {}
    assert [(c["key"], c["memory"], c["sightings"]) for c in plan.candidates] == [
        ("fetchweather", "a", 1)
    ]


def test_a_second_sighting_promotes_and_links_the_first_memory() -> None:
    cand = Candidate("fetchweather", "a", 2, 1, T0)
    plan = plan_entities([mem("b", m("fetchweather"), day=3)], {}, {"fetchweather": cand}, 2, CFG)
    assert plan.promoted == ["fetchweather"]
    (entity,) = plan.entities
    assert entity["memories"] == 2 and entity["count"] == 3
    assert entity["first_seen"] == T0 and entity["last_seen"] == T0 + timedelta(days=3)
    links = {(x["memory"], x["paired"]) for x in plan.mentions}
    # the first memory is linked, but adds no pairs after the fact
    assert links == {("a", False), ("b", True)}
    assert plan.candidates == []


def test_two_sightings_in_one_batch_promote() -> None:
    plan = plan_entities([mem("a", m("userid")), mem("b", m("userid"))], {}, {}, 2, CFG)
    assert [e["key"] for e in plan.entities] == ["userid"]
    assert plan.candidates == [] and plan.promoted == []


def test_names_of_people_and_places_are_kept_at_first_sighting() -> None:
    plan = plan_entities(
        [mem("a", m("caroline", "PERSON"), m("boston", "GPE"), m("acme", "ORG"))], {}, {}, 1, CFG
    )
    assert sorted(e["key"] for e in plan.entities) == ["boston", "caroline"]
    assert [c["key"] for c in plan.candidates] == ["acme"]
    assert plan.pairs == {("boston", "caroline"): 1}


def test_known_entities_are_always_mentioned() -> None:
    plan = plan_entities([mem("z", m("flask"))], {"flask": 7}, {}, 30, CFG)
    assert plan.entities[0]["memories"] == 1 and plan.promoted == []
    assert plan.mentions == [{"memory": "z", "key": "flask", "count": 1, "paired": True}]


def test_promote_at_one_keeps_every_candidate() -> None:
    cfg = EntityConfig(promote_at=1)
    plan = plan_entities([mem("a", m("x1y"), m("zz9"))], {}, {}, 1, cfg)
    assert len(plan.entities) == 2 and plan.candidates == []


def test_pairs_are_capped_to_the_most_salient_entities() -> None:
    # 10 known entities in one memory: only the 6 most salient are paired (15 pairs)
    keys = [f"e{i}" for i in range(10)]
    known = {k: (i + 1) * 10 for i, k in enumerate(keys)}  # e0 the rarest
    plan = plan_entities([mem("a", *(m(k) for k in keys))], known, {}, 1000, CFG)
    assert len(plan.pairs) == 15
    paired = {x["key"] for x in plan.mentions if x["paired"]}
    assert paired == {f"e{i}" for i in range(6)}  # rarer entities say more about the memory
    assert len(plan.mentions) == 10  # every entity is still mentioned


def test_salience_prefers_rare_and_repeated() -> None:
    assert salience(1, 2, 100) > salience(1, 50, 100)
    assert salience(3, 50, 100) > salience(1, 50, 100)


def test_pair_weights_merge_as_counts() -> None:
    batch = [mem(str(i), m("flask", "ORG"), m("sqlite", "ORG")) for i in range(5)]
    plan = plan_entities(batch, {"flask": 3, "sqlite": 3}, {}, 10, CFG)
    assert plan.pairs == {("flask", "sqlite"): 5}


_KEY = st.sampled_from([f"k{i}" for i in range(30)])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(_KEY, max_size=25, unique=True), min_size=1, max_size=20),
    st.integers(min_value=2, max_value=8),
)
def test_edges_grow_linearly(batch_keys: list[list[str]], max_paired: int) -> None:
    cfg = EntityConfig(max_paired=max_paired)
    batch = [mem(str(i), *(m(k) for k in keys)) for i, keys in enumerate(batch_keys)]
    known = {f"k{i}": 1 for i in range(30)}
    plan = plan_entities(batch, known, {}, len(batch), cfg)
    cap = max_paired * (max_paired - 1) // 2
    assert sum(plan.pairs.values()) <= cap * len(batch)
    for i, keys in enumerate(batch_keys):
        paired = [x for x in plan.mentions if x["memory"] == str(i) and x["paired"]]
        assert len(paired) == min(len(keys), max_paired)


def test_alias_keys_are_written_as_their_canonical_entity() -> None:
    from pipelines.ingest.entity_graph import resolve_aliases

    mentions = [
        EntityMention("Mel", "mel", "PERSON", 2),
        EntityMention("Paris", "paris", "GPE", 1),
        EntityMention("Melanie", "melanie", "PERSON", 1),
    ]
    out = resolve_aliases(mentions, {"mel": ("melanie", "Melanie", "PERSON")})
    assert out == [
        EntityMention("Melanie", "melanie", "PERSON", 3),
        EntityMention("Paris", "paris", "GPE", 1),
    ]
    assert resolve_aliases(mentions, {}) == mentions

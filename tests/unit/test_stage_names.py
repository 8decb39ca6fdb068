"""Community stage names (pipelines.consolidate.stage_names), pure."""

from __future__ import annotations

from pipelines.consolidate.stage_names import Term, stage_names, tf_idf


def test_tf_idf_prefers_the_distinctive() -> None:
    everywhere = Term("mel", "Mel", tf=10, df=100)
    local = Term("pottery", "Pottery Club", tf=4, df=5)
    assert tf_idf(local, 100) > tf_idf(everywhere, 100)


def test_stages_are_named_after_distinctive_entities_and_never_alike() -> None:
    common = [Term("mel", "Mel", 10, 90), Term("art", "Art Show", 2, 60)]
    terms = {
        "community:a": [*common, Term("pottery", "Pottery Club", 4, 5)],
        "community:b": [*common, Term("paris", "Paris", 3, 4), Term("louvre", "Louvre", 2, 2)],
        "community:c": common,
        "community:d": common,
    }
    sizes = {"community:a": 40, "community:b": 30, "community:c": 20, "community:d": 10}
    names = stage_names(terms, sizes, memories=100, k=2)
    assert names["community:a"] == "topic: Pottery Club, Mel"
    assert names["community:b"].startswith("topic: Paris, Louvre")
    assert len(set(names.values())) == 4, names


def test_a_stage_without_entities_is_named_by_id() -> None:
    assert stage_names({"community:ab12": []}, {}, 10, 3) == {"community:ab12": "topic ab12"}

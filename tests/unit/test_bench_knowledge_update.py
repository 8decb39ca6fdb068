"""The knowledge-update benchmark's scorer (pure)."""

from __future__ import annotations

from benchmarks.knowledge_update import SEQUENCES, memory_id, score


def test_score_counts_latest_first_and_outdated_values() -> None:
    q0, q1 = SEQUENCES[0][0], SEQUENCES[1][0]
    results = {
        q0: [memory_id(0, 2), "f1"],  # latest first, nothing outdated
        q1: [memory_id(1, 0), memory_id(1, 2)],  # outdated first
    }
    got = score(results)
    assert got["questions"] == len(SEQUENCES)
    assert got["latest_first"] == 1
    assert got["with_outdated_value"] == 1
    assert got["latest_first_share"] == round(1 / len(SEQUENCES), 3)


def test_every_sequence_states_a_value_then_changes_it_twice() -> None:
    for question, values in SEQUENCES:
        assert question.endswith("?")
        assert len(values) == 3 and len(set(values)) == 3

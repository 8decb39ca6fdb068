"""LoCoMo → generic format conversion (inline sample; and the real file, present on every
dev/CI machine under ../shared/datasets/locomo)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime

import pytest

from benchmarks import locomo
from benchmarks.format import dataset_to_json, parse_dataset


def tiny_locomo() -> list[dict]:
    return [
        {
            "sample_id": "conv-x",
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bob",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bob!"},
                    {
                        "speaker": "Bob",
                        "dia_id": "D1:2",
                        "text": "Look at my garden.",
                        "img_url": ["http://example.invalid/x.jpg"],
                        "blip_caption": "a photo of tomatoes",
                        "query": "tomato garden",
                    },
                ],
                "session_2_date_time": "9:02 am on 22 November, 2023",
                "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Tomatoes again"}],
                "session_10_date_time": "10:00 am on 1 December, 2023",
                "session_10": [{"speaker": "Bob", "dia_id": "D10:1", "text": "Winter now."}],
                "session_11_date_time": "11:00 am on 2 December, 2023",  # no session_11
            },
            "qa": [
                {"question": "What does Bob grow?", "answer": "tomatoes", "evidence": ["D1:2"],
                 "category": 4},
                {"question": "When?", "answer": 2023, "evidence": ["D1:2; D2:1"], "category": 2},
                {"question": "Multi", "answer": "x", "evidence": ["D1:1 D10:1", "D:2:1"],
                 "category": 1},
                {"question": "Zero-padded", "answer": "x", "evidence": ["D10:01"], "category": 3},
                {"question": "Broken", "answer": "x", "evidence": ["D", "D7:7"], "category": 4},
                {"question": "Adversarial?", "adversarial_answer": "roses",
                 "evidence": ["D1:1"], "category": 5},
            ],
        }
    ]  # fmt: skip


def test_conversion_rules():
    ds, rep = locomo.convert(tiny_locomo())
    (c,) = ds.conversations
    assert c.id == "conv-x" and c.speakers == ("Ann", "Bob")
    # sessions in numeric order (10 after 2), the orphan date key ignored and counted
    assert [s.id for s in c.sessions] == ["session_1", "session_2", "session_10"]
    assert rep.orphan_date_keys == 1
    assert c.sessions[0].started_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert c.sessions[1].started_at == datetime(2023, 11, 22, 9, 2, tzinfo=UTC)
    assert all(s.stage is None for s in c.sessions)
    t1, t2 = c.sessions[0].turns
    assert (t1.id, t1.role, t1.speaker) == ("D1:1", "user", "Ann")
    assert (t2.role, t2.speaker) == ("assistant", "Bob")
    assert t2.content == "Look at my garden. [shared image: a photo of tomatoes]"
    assert rep.image_turns == 1
    qs = c.questions
    assert [q.category for q in qs] == [
        "single-hop",
        "temporal",
        "multi-hop",
        "open-domain",
        "single-hop",
        "adversarial",
    ]
    assert [q.unanswerable for q in qs] == [False] * 5 + [True]
    assert qs[5].answer is None and qs[1].answer == "2023"
    assert qs[1].evidence == ("D1:2", "D2:1")
    assert qs[2].evidence == ("D1:1", "D10:1", "D2:1")
    assert qs[3].evidence == ("D10:1",)
    assert qs[4].evidence == ()  # nothing resolvable
    # question time: the start of the last session, for every question
    assert {q.question_time for q in qs} == {datetime(2023, 12, 1, 10, tzinfo=UTC)}
    assert rep.evidence_split == 2  # "D1:2; D2:1", "D1:1 D10:1"
    assert rep.evidence_normalised == 2  # "D:2:1", "D10:01"
    assert [u["entry"] for u in rep.evidence_unresolved] == ["D", "D7:7"]
    assert rep.questions_without_evidence == 1
    assert (rep.conversations, rep.sessions, rep.turns, rep.questions) == (1, 3, 4, 6)
    # the result is a valid generic document
    assert parse_dataset(json.loads(json.dumps(dataset_to_json(ds)))) == ds
    assert ds.meta["conversion"]["evidence_unresolved_count"] == 2


@pytest.mark.parametrize(
    ("raw", "ids"),
    [
        ("D1:3", ["D1:3"]),
        ("D8:6; D9:17", ["D8:6", "D9:17"]),
        ("D9:1 D4:4 D4:6", ["D9:1", "D4:4", "D4:6"]),
        ("D:11:26", ["D11:26"]),
        ("D30:05", ["D30:5"]),
        ("D", []),
    ],
)
def test_normalise_evidence(raw, ids):
    assert locomo.normalise_evidence(raw)[0] == ids


def test_session_time_parsing():
    assert locomo.parse_session_time("12:24 am on 7 April, 2023") == datetime(
        2023, 4, 7, 0, 24, tzinfo=UTC
    )
    with pytest.raises(ValueError, match="unrecognised"):
        locomo.parse_session_time("yesterday")


def test_missing_file_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(locomo.ENV_PATH, str(tmp_path / "nope.json"))
    with pytest.raises(locomo.LocomoUnavailable, match="MNEMOGRAPH_LOCOMO_PATH"):
        locomo.resolve_path()
    f = tmp_path / "l.json"
    f.write_text(json.dumps(tiny_locomo()))
    monkeypatch.setenv(locomo.ENV_PATH, str(f))
    assert locomo.resolve_path() == f
    ds, _ = locomo.load()
    assert ds.question_count == 6


def test_real_locomo_file():
    """The shared copy (CC BY-NC, evaluation only) converts with the documented counts."""
    ds, rep = locomo.load(locomo.DEFAULT_PATH)
    assert (len(ds.conversations), ds.session_count, ds.turn_count, ds.question_count) == (
        10,
        272,
        5882,
        1986,
    )
    cats = Counter(q.category for c in ds.conversations for q in c.questions)
    # README counts per category number: 1=282, 2=321, 3=96, 4=841, 5=446
    assert cats == {
        "multi-hop": 282,
        "temporal": 321,
        "open-domain": 96,
        "single-hop": 841,
        "adversarial": 446,
    }
    assert sum(q.unanswerable for c in ds.conversations for q in c.questions) == 446
    assert rep.evidence_split == 4
    assert rep.evidence_normalised == 2
    assert sorted(u["entry"] for u in rep.evidence_unresolved) == ["D", "D10:19", "D4:36"]
    assert rep.questions_without_evidence == 4
    # every evidence id resolves, question time is after every session
    for c in ds.conversations:
        turns = c.session_of_turn()
        last = max(s.started_at for s in c.sessions)
        for q in c.questions:
            assert all(e in turns for e in q.evidence)
            assert q.question_time == last

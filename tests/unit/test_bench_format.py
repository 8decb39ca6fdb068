"""The generic benchmark format: parsing, validation errors, round trip."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime

import pytest

from benchmarks.format import (
    SCHEMA,
    FormatError,
    dataset_to_json,
    load_dataset,
    parse_dataset,
)


def sample() -> dict:
    return {
        "name": "tiny",
        "conversations": [
            {
                "id": "c1",
                "speakers": ["Ann", "Bob"],
                "sessions": [
                    {
                        "id": "s1",
                        "started_at": "2024-03-01T10:00:00",
                        "turns": [
                            {"id": "t1", "role": "user", "speaker": "Ann", "content": "Hi Bob"},
                            {
                                "id": "t2",
                                "role": "assistant",
                                "speaker": "Bob",
                                "content": "I adopted a cat named Miso.",
                                "time": "2024-03-01T10:01:00Z",
                            },
                        ],
                    },
                    {
                        "id": "s2",
                        "stage": "pets",
                        "turns": [{"id": "t3", "role": "user", "speaker": "Ann", "content": "Ok"}],
                    },
                ],
                "questions": [
                    {
                        "id": "q1",
                        "text": "What is the cat called?",
                        "category": "single-hop",
                        "evidence": ["t2"],
                        "answer": "Miso",
                        "question_time": "2024-03-02T00:00:00+00:00",
                    },
                    {
                        "id": "q2",
                        "text": "What is Bob's dog called?",
                        "category": 5,
                        "evidence": [],
                        "unanswerable": True,
                    },
                ],
            }
        ],
    }


def test_parses_a_valid_document():
    ds = parse_dataset(sample())
    assert ds.name == "tiny"
    c = ds.conversations[0]
    assert c.speakers == ("Ann", "Bob")
    assert [s.id for s in c.sessions] == ["s1", "s2"]
    assert c.sessions[0].started_at == datetime(2024, 3, 1, 10, tzinfo=UTC)  # naive -> UTC
    assert c.sessions[0].turns[1].time == datetime(2024, 3, 1, 10, 1, tzinfo=UTC)
    assert c.sessions[1].stage == "pets" and c.sessions[1].started_at is None
    q1, q2 = c.questions
    assert q1.evidence == ("t2",) and q1.answer == "Miso" and not q1.unanswerable
    assert q2.category == "5" and q2.unanswerable and q2.evidence == ()
    assert c.session_of_turn() == {"t1": "s1", "t2": "s1", "t3": "s2"}
    assert (ds.turn_count, ds.session_count, ds.question_count) == (3, 2, 2)


def test_round_trip():
    ds = parse_dataset(sample())
    assert parse_dataset(json.loads(json.dumps(dataset_to_json(ds)))) == ds


def _broken(mutate) -> str:
    doc = copy.deepcopy(sample())
    mutate(doc)
    with pytest.raises(FormatError) as err:
        parse_dataset(doc)
    return str(err.value)


def test_errors_name_the_path():
    conv = "$.conversations[0]"
    msg = _broken(lambda d: d["conversations"][0]["sessions"][0]["turns"][0].pop("speaker"))
    assert msg.startswith(f"{conv}.sessions[0].turns[0].speaker") and "missing" in msg
    msg = _broken(lambda d: d["conversations"][0]["sessions"][0]["turns"][0].update(role="bot"))
    assert f"{conv}.sessions[0].turns[0].role" in msg and "'bot'" in msg
    msg = _broken(lambda d: d["conversations"][0]["questions"][0].update(evidenc=["t2"]))
    assert "unknown field" in msg and "evidenc" in msg
    msg = _broken(lambda d: d["conversations"][0]["questions"][0].update(evidence=["t9"]))
    assert f"{conv}.questions[0].evidence[0]" in msg and "'t9'" in msg
    msg = _broken(lambda d: d["conversations"][0]["sessions"][1]["turns"][0].update(id="t1"))
    assert "duplicate turn id 't1'" in msg
    msg = _broken(lambda d: d["conversations"][0]["sessions"][0].update(started_at="May 8"))
    assert "ISO-8601" in msg
    msg = _broken(lambda d: d["conversations"][0]["sessions"][0]["turns"][0].update(content=" "))
    assert "must not be empty" in msg
    msg = _broken(lambda d: d["conversations"][0]["sessions"][1].update(turns=[]))
    assert "at least 1" in msg
    msg = _broken(lambda d: d["conversations"][0]["questions"][1].update(unanswerable="yes"))
    assert "boolean" in msg
    msg = _broken(lambda d: d.update(conversations=[d["conversations"][0]] * 2))
    assert "duplicate conversation id" in msg
    msg = _broken(lambda d: d.pop("name"))
    assert msg.startswith("$.name")


def test_load_dataset_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no benchmark dataset"):
        load_dataset(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(FormatError, match="not valid JSON"):
        load_dataset(bad)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(sample()))
    assert load_dataset(good).name == "tiny"


def test_schema_documents_every_field():
    conv = SCHEMA["properties"]["conversations"]["items"]["properties"]
    turn = conv["sessions"]["items"]["properties"]["turns"]["items"]
    question = conv["questions"]["items"]
    assert set(turn["properties"]) == {"id", "role", "speaker", "content", "time"}
    assert set(question["properties"]) == {
        "id",
        "text",
        "category",
        "evidence",
        "answer",
        "question_time",
        "unanswerable",
    }
    assert set(question["required"]) == {"id", "text", "category", "evidence"}

"""BEAM → generic format conversion, on a tiny synthetic split written to a temporary folder
(BEAM itself never enters the repository)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchmarks import beam
from benchmarks.__main__ import main
from benchmarks.format import dataset_to_json, load_dataset, parse_dataset

LONG = "def f():\n    return 1\n" * 20_000  # ~460,000 characters: must come through whole


def _chat() -> list[dict]:
    return [
        {
            "batch_number": 1,
            "time_anchor": None,
            "turns": [
                [
                    {"role": "user", "id": 0, "time_anchor": "March-15-2024", "index": "1,1",
                     "question_type": "main_question", "content": "I prefer SQLite for now."},
                    {"role": "assistant", "id": 1, "content": "Noted."},
                ],
                [
                    {"role": "user", "id": 2, "question_type": "followup", "content": LONG},
                    {"role": "assistant", "id": 3, "content": "That is a long file."},
                ],
            ],
        },
        {
            "batch_number": 2,
            "time_anchor": "April-05-2024",
            "turns": [
                [
                    {"role": "user", "id": 4, "content": "I prefer PostgreSQL now."},
                    {"role": "assistant", "id": 5, "content": "Switching."},
                ]
            ],
        },
        {
            "batch_number": 3,
            "time_anchor": None,
            "turns": [[{"role": "user", "id": 6, "content": "No anchor in this batch."}]],
        },
    ]  # fmt: skip


def _probing() -> dict:
    return {
        "abstention": [{"question": "What colour is my car?", "ideal_response": "Unknown.",
                        "source_chat_ids": None}],
        "knowledge_update": [{"question": "Which database?", "answer": "PostgreSQL",
                              "source_chat_ids": {"original_info": [0], "updated_info": [4, 4]}}],
        "multi_session_reasoning": [{"question": "How many?", "answer": "two",
                                     "source_chat_ids": [2, [4, 99]]}],
        "summarization": [{"question": "Summarise.", "ideal_summary": "A summary.",
                           "source_chat_ids": []}],
    }  # fmt: skip


@pytest.fixture()
def split(tmp_path: Path) -> Path:
    root = tmp_path / "100K"
    folder = root / "1"
    (folder / "probing_questions").mkdir(parents=True)
    (folder / "chat.json").write_text(json.dumps(_chat()))
    (folder / "topic.json").write_text(json.dumps({"id": 1, "title": "t"}))
    (folder / "probing_questions" / "probing_questions.json").write_text(json.dumps(_probing()))
    (root / "notes").mkdir()  # not a conversation folder: ignored
    return root


def test_sessions_and_turns(split: Path) -> None:
    ds, rep = beam.load(split)
    (c,) = ds.conversations
    assert c.id == "beam-1" and c.speakers == ("user", "assistant")
    assert [s.id for s in c.sessions] == ["batch-1", "batch-2", "batch-3"]
    s1, s2, s3 = c.sessions
    march, april = datetime(2024, 3, 15, tzinfo=UTC), datetime(2024, 4, 5, tzinfo=UTC)
    # the anchor on the batch's first message dates the batch; later messages inherit it
    assert s1.started_at == march and [t.time for t in s1.turns] == [march] * 4
    assert s2.started_at == april and s3.started_at == april
    assert [t.id for t in s1.turns] == ["0", "1", "2", "3"]
    roles = [(t.role, t.speaker) for t in s1.turns[:2]]
    assert roles == [("user", "user"), ("assistant", "assistant")]
    # verbatim, untruncated
    assert s1.turns[2].content == LONG
    assert rep.longest_turn_chars == len(LONG)
    assert (rep.conversations, rep.sessions, rep.turns) == (1, 3, 7)


def test_questions_and_evidence(split: Path) -> None:
    ds, rep = beam.load(split)
    qs = {q.category: q for q in ds.conversations[0].questions}
    assert qs["abstention"].unanswerable and qs["abstention"].evidence == ()
    assert qs["abstention"].answer == "Unknown."
    # a dict of named lists is flattened and de-duplicated in order
    assert qs["knowledge_update"].evidence == ("0", "4")
    assert not qs["knowledge_update"].unanswerable
    # nested lists are flattened; an id naming no message is dropped and reported
    assert qs["multi_session_reasoning"].evidence == ("2", "4")
    assert rep.evidence_unresolved == [{"question": "beam-1:multi_session_reasoning:0", "id": "99"}]
    assert qs["summarization"].answer == "A summary." and qs["summarization"].evidence == ()
    assert rep.questions_without_evidence == 2
    # asked after the whole conversation: the last anchor
    assert {q.question_time for q in qs.values()} == {datetime(2024, 4, 5, tzinfo=UTC)}
    assert qs["knowledge_update"].id == "beam-1:knowledge_update:0"


def test_round_trip_through_the_generic_format(split: Path) -> None:
    ds, _ = beam.load(split)
    again = parse_dataset(json.loads(json.dumps(dataset_to_json(ds))))
    assert again.conversations == ds.conversations


def test_convert_command_writes_a_valid_file(split: Path, tmp_path: Path) -> None:
    out = tmp_path / "beam.json"
    assert main(["convert-beam", "--path", str(split), "--out", str(out)]) == 0
    ds = load_dataset(out)
    assert ds.turn_count == 7 and ds.question_count == 4


def test_convert_refuses_the_repository(split: Path) -> None:
    inside = beam.REPO_ROOT / "benchmarks" / "results" / "beam-converted.json"
    assert main(["convert-beam", "--path", str(split), "--out", str(inside)]) == 2
    assert not inside.exists()


def test_missing_split_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(beam.BeamUnavailable, match="MNEMOGRAPH_BEAM_PATH"):
        beam.resolve_path(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(beam.BeamUnavailable, match="no numbered"):
        beam.load(tmp_path / "empty")


def test_bad_anchor_is_named() -> None:
    with pytest.raises(ValueError, match="15/03/2024"):
        beam.parse_anchor("15/03/2024")

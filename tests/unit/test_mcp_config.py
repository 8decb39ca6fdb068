"""What ``mnemograph mcp --print-config`` emits, and the ids that make ``remember`` safe to
retry."""

import json
from pathlib import Path

from app.mcp import config, ids
from app.mcp.results import as_text


def test_print_config_names_an_absolute_command_and_data_dir():
    entry = json.loads(config.snippet("personal"))["mcpServers"]["mnemograph"]
    assert Path(entry["command"]).is_absolute() and Path(entry["command"]).exists()
    assert entry["args"][-3:] == ["mcp", "--space", "personal"]
    assert Path(entry["env"]["MNEMOGRAPH_NEO4J_DIR"]).is_absolute()


def test_the_same_messages_get_the_same_ids_and_later_ones_do_not_collide():
    turns = [{"role": "user", "content": "ok"}, {"role": "user", "content": "ok"},
             {"role": "assistant", "content": "Done."}]  # fmt: skip
    first = ids.turn_ids("sp", "s1", turns)
    assert first == ids.turn_ids("sp", "s1", [dict(t) for t in turns])
    assert len(set(first)) == 3  # a repeated message in one call keeps both
    later = ids.turn_ids("sp", "s1", [{"role": "user", "content": "Next question?"}])
    assert not set(later) & set(first)
    assert ids.session_id("sp", turns) == ids.session_id("sp", turns) != ids.session_id("x", turns)
    assert ids.note_id("sp", None, "tea", None) != ids.note_id("sp", "s1", "tea", None)


def test_answers_are_compact_json_without_nulls():
    assert as_text({"a": None, "b": [1, {"c": None, "d": "é"}]}) == '{"b":[1,{"d":"é"}]}'

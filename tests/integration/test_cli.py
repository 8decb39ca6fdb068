"""The ``mnemograph`` command line against a live server on a real Neo4j: spaces, ingest of
both file formats, recall, context, jobs, export and a verified, idempotent import."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from app.cli import main

GENERIC = {
    "name": "tiny",
    "conversations": [{
        "id": "c1",
        "sessions": [{"id": "s1", "started_at": "2024-01-02T09:00:00Z", "turns": [
            {"id": "t1", "role": "user", "speaker": "Ana", "content": "The launch is on May 3."},
            {"id": "t2", "role": "assistant", "speaker": "Bot", "content": "May 3, noted."},
        ]}],
        "questions": [{"id": "q1", "text": "When is the launch?", "category": "x",
                       "evidence": ["t1"]}],
    }],
}  # fmt: skip


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_cli_end_to_end(live, tmp_path: Path, capsys):
    space, copy = f"cli-{uuid.uuid4().hex[:8]}", f"cli-copy-{uuid.uuid4().hex[:6]}"
    url = ("--url", live.url)
    generic = tmp_path / "tiny.json"
    generic.write_text(json.dumps(GENERIC))
    messages = tmp_path / "chat.jsonl"
    messages.write_text(
        "\n".join(
            json.dumps(m)
            for m in [
                {"role": "user", "content": "I moved to Porto last week.", "session": "m1"},
                {"role": "assistant", "content": "Porto, nice.", "session": "m1"},
                {"role": "user", "content": "My sister visits in June.", "session": "m2"},
            ]
        )
    )
    code, out = run(capsys, "ingest", str(generic), "--space", space, "--quiet", "--json", *url)
    assert code == 0 and json.loads(out)["turns"] == 2
    code, out = run(capsys, "ingest", str(messages), "--space", space, "--quiet", "--json", *url)
    assert code == 0 and json.loads(out)["sessions"] == 2
    patch = ("--settings", '{"gate": {"enabled": false}}', "--name", "CLI", "--json")
    code, out = run(capsys, "spaces", "update", space, *patch, *url)
    assert code == 0 and json.loads(out)["settings"] == {"gate": {"enabled": False}}
    code, out = run(capsys, "spaces", "list", *url)
    assert code == 0 and space in out and out.splitlines()[0].startswith("ID")
    code, out = run(capsys, "recall", "When is the launch?", "--space", space, "--json", *url)
    assert code == 0 and "May 3" in json.loads(out)["results"][0]["content"]
    code, out = run(capsys, "context", "Where do I live?", "--space", space, *url)
    assert code == 0 and "Porto" in out
    code, out = run(capsys, "jobs", "run", "decay", "--space", space, "--dry-run", "--json", *url)
    assert code == 0 and json.loads(out)["status"] == "ok"
    code, out = run(capsys, "jobs", "list", "--space", space, *url)
    assert code == 0 and "decay" in out

    dump = tmp_path / "space.jsonl"
    code, out = run(capsys, "export", "--space", space, "-o", str(dump), "--quiet", "--json", *url)
    assert code == 0 and json.loads(out)["nodes"]["Memory"] == 5
    for _ in range(2):  # the second import changes nothing and still verifies
        code, out = run(capsys, "import", str(dump), "--space", copy, "--quiet", "--json", *url)
        result = json.loads(out)
        assert code == 0 and result["verified"] and result["mismatches"] == []
    code, out = run(capsys, "recall", "When is the launch?", "--space", copy, "--json", *url)
    assert "May 3" in json.loads(out)["results"][0]["content"]

    assert main(["recall", "x", "--space", space, "-k", "0", *url]) == 2
    assert "invalid_input (field: k)" in capsys.readouterr().err
    for sid in (space, copy):
        assert run(capsys, "spaces", "delete", sid, *url)[0] == 0


UNSAFE = "red \x1b[31mALERT\x07 \x00 \u202eevil\u2066 \x9b end"


def test_the_cli_never_prints_control_or_bidi_characters(live, tmp_path: Path, capsys):
    """Stored ESC/BEL/NUL/C1/bidi characters are shown escaped in tables, not printed raw in
    the context, escaped in JSON too (the same value once parsed); a real process logs no
    HTTP request over its progress bar on stderr."""
    space = f"cli-esc-{uuid.uuid4().hex[:8]}"
    chat = tmp_path / "esc.jsonl"
    chat.write_text(json.dumps({"role": "user", "content": f"The launch code is {UNSAFE}"}))
    url = ("--url", live.url)
    ingested = subprocess.run(
        [sys.executable, "-m", "app", "ingest", str(chat), "--space", space, *url],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    assert "HTTP Request" not in ingested.stderr and "turn" in ingested.stderr  # the bar
    try:
        calls = [("recall",), ("context",), ("recall", "--json")]
        outs = [run(capsys, c[0], "launch code", "--space", space, *c[1:], *url)[1] for c in calls]
    finally:
        run(capsys, "spaces", "delete", space, *url)
    for out in outs:
        assert not any(c in out for c in "\x1b\x07\x00\u202e\u2066\x9b")
    table, prompt, as_json = outs
    assert "\\x1b[31mALERT\\x07 \\x00" in table and "\\u202eevil\\u2066 \\x9b" in table
    assert "ALERT" in prompt  # (the server's context writes them as character references)
    assert UNSAFE in json.loads(as_json)["results"][0]["content"]

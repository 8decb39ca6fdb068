"""docs/configuration.md documents every setting, and every variable the docs give a table row
(there or in the README) is one the code reads."""

import re
from pathlib import Path

from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text()
README = (ROOT / "README.md").read_text()
ROW = re.compile(r"^\| `MNEMOGRAPH_([A-Z0-9_]+)` \|", re.M)
SETTINGS = {name.upper() for name in Settings.model_fields}


def _code() -> str:
    """Every Python file of the repository's packages and tests, and the Makefile."""
    dirs = ("app", "pipelines", "mnemograph", "neo4j_runtime", "benchmarks", "tests")
    files = [p for d in dirs for p in sorted((ROOT / d).rglob("*.py"))]
    return "\n".join(p.read_text() for p in files) + (ROOT / "Makefile").read_text()


def test_configuration_documents_every_setting():
    assert SETTINGS - set(ROW.findall(CONFIGURATION)) == set()


def test_every_documented_variable_is_read_by_the_code():
    documented = set(ROW.findall(CONFIGURATION)) | set(ROW.findall(README))
    code = _code()
    unread = {v for v in documented - SETTINGS if f"MNEMOGRAPH_{v}" not in code}
    assert unread == set()
    assert "NEO4J_PORT" in documented and "URL" in documented  # the non-Settings tables parse


def test_env_prefix(monkeypatch):
    monkeypatch.setenv("MNEMOGRAPH_PORT", "9123")
    monkeypatch.setenv("MNEMOGRAPH_RERANKER_ENABLED", "true")
    s = Settings()
    assert s.port == 9123 and s.reranker_enabled is True


def test_bad_value_names_the_setting(monkeypatch):
    import pydantic
    import pytest

    monkeypatch.setenv("MNEMOGRAPH_PORT", "99999")
    with pytest.raises(pydantic.ValidationError, match="port"):
        Settings()

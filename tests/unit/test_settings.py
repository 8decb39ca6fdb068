"""README's configuration table and the Settings class list the same variables."""

import re
from pathlib import Path

from app.settings import Settings

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_readme_documents_every_setting():
    documented = set(re.findall(r"^\| `MNEMOGRAPH_([A-Z0-9_]+)` \|", README, re.M))
    expected = {name.upper() for name in Settings.model_fields}
    assert documented == expected


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

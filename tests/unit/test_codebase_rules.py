"""Rules of the codebase that a reviewer would otherwise have to remember."""

import re
from pathlib import Path

import cypher

ROOT = Path(__file__).resolve().parents[2]
CYPHER_IN_STRING = re.compile(
    r"""["'](?:[^"'\n]*\b(?:MATCH|MERGE|UNWIND)\s*\(|\s*CALL\s+(?:db|gds)\.)"""
)


def test_every_cypher_file_loads():
    names = cypher.names()
    assert "spaces/create" in names
    for name in names:
        assert cypher.load(name).strip(), name


def test_no_cypher_in_python_strings():
    """Cypher lives in cypher/*.cypher, nowhere else."""
    offenders = []
    for pkg in ("app", "pipelines", "graph_schema", "benchmarks", "neo4j_runtime"):
        for path in (ROOT / pkg).rglob("*.py"):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if CYPHER_IN_STRING.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []


def test_pipelines_do_not_import_app():
    """One-way dependencies: app -> pipelines, never back."""
    bad = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "pipelines").rglob("*.py")
        if re.search(r"^\s*(from|import)\s+app\b", p.read_text(), re.M)
    ]
    assert bad == []


def test_unknown_statement_is_a_clear_error():
    import pytest

    with pytest.raises(cypher.UnknownStatement, match="no Cypher statement"):
        cypher.load("nope/missing")
    with pytest.raises(cypher.UnknownStatement):
        cypher.load("../pyproject")

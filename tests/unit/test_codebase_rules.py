"""Rules of the codebase that a reviewer would otherwise have to remember."""

import ast
import re
from pathlib import Path

import pytest

import cypher
from benchmarks.cypher import LIBRARY as BENCH_STATEMENTS
from tests.cypher import LIBRARY as TEST_STATEMENTS

ROOT = Path(__file__).resolve().parents[2]
CYPHER_IN_STRING = re.compile(
    r"""["'](?:[^"'\n]*\b(?:MATCH|MERGE|UNWIND)\s*\(|\s*CALL\s+(?:db|gds)\.)"""
)
#: Test modules that still write Cypher inline; move it to tests/cypher (then drop the entry).
INLINE_CYPHER_PENDING = frozenset({"tests/integration/test_context_assembly.py"})

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
#: Modules or functions over the limits for now (``path`` or ``path:function``).
SIZE_PENDING: frozenset[str] = frozenset()


def test_every_cypher_file_loads():
    for library in (cypher.LIBRARY, TEST_STATEMENTS, BENCH_STATEMENTS):
        names = library.names()
        assert names
        for name in names:
            assert library.load(name).strip(), name
    assert "spaces/create" in cypher.names()


def test_test_and_benchmark_statements_are_not_in_the_product():
    """Statements only tests or benchmarks run live with them; the product cannot load them."""
    product = cypher.names()
    assert not [n for n in product if "testing_" in n or n.startswith("bench/")]
    for name in (*TEST_STATEMENTS.names(), *BENCH_STATEMENTS.names()):
        assert name not in product
        with pytest.raises(cypher.UnknownStatement):
            cypher.load(name)


def test_no_cypher_in_python_strings():
    """Cypher lives in named .cypher files, nowhere else."""
    offenders = []
    for pkg in (
        "app",
        "pipelines",
        "graph_schema",
        "cypher",
        "benchmarks",
        "neo4j_runtime",
        "tests",
    ):
        for path in (ROOT / pkg).rglob("*.py"):
            rel = str(path.relative_to(ROOT))
            if rel in INLINE_CYPHER_PENDING or path == Path(__file__):
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if CYPHER_IN_STRING.search(line):
                    offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == []


def test_modules_and_functions_stay_small():
    """No module of app/ or pipelines/ over 600 lines, no function over 80."""
    too_big = []
    for pkg in ("app", "pipelines"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            source = path.read_text(encoding="utf-8")
            if len(source.splitlines()) > MAX_MODULE_LINES and rel not in SIZE_PENDING:
                too_big.append(f"{rel}: {len(source.splitlines())} lines")
            for node in ast.walk(ast.parse(source)):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES and f"{rel}:{node.name}" not in SIZE_PENDING:
                    too_big.append(f"{rel}:{node.lineno} {node.name}: {length} lines")
    assert too_big == []


def test_unknown_statement_is_a_clear_error():
    with pytest.raises(cypher.UnknownStatement, match="no Cypher statement"):
        cypher.load("nope/missing")
    with pytest.raises(cypher.UnknownStatement):
        cypher.load("../pyproject")

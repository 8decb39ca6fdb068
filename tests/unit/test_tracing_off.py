"""Tracing off costs a flag check: in a fresh process that builds the app and runs the
pipelines' tracing helpers with tracing off, neither OpenTelemetry's SDK nor an exporter is
ever imported, and the helpers hand back one shared no-op. (Its API may be: FastAPI imports
it for its own telemetry hooks.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROGRAM = """
import sys
from app.main import create_app
from app.settings import Settings
import pipelines.assemble.service, pipelines.consolidate.runner, pipelines.recall.runner
from pipelines import tracing
from pipelines.assemble.request import Clock

app = create_app(Settings())
assert app.state.tracer is None and not tracing.enabled()
import cypher
assert tracing.span("a") is tracing.statement("spaces/get", cypher.load("spaces/get"), "neo4j")
clock = Clock()
clock.lap("one")
clock.total()
with tracing.job_span("decay", "s", "r") as outcome:
    outcome("ok")
heavy = ("opentelemetry.sdk", "opentelemetry.exporter")
loaded = sorted(m for m in sys.modules if m.startswith(heavy))
print(",".join(loaded))
"""


def test_tracing_off_imports_no_opentelemetry() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_db_operation_is_the_statements_first_keyword_past_its_comments() -> None:
    import cypher
    from pipelines.tracing import operation

    raw = (Path(cypher.__file__).parent / "consolidate" / "heap_configured.cypher").read_text()
    assert raw.startswith("//")  # the file's comment lines are skipped
    assert operation(raw) == "CALL"
    assert operation(cypher.load("spaces/get")) == "MATCH"
    assert operation(cypher.load("consolidate/jobrun_start")) == "CREATE"
    assert operation("// nothing but a comment") == "UNKNOWN"

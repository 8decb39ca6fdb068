"""Tracing off costs a flag check: in a fresh process that builds the app and runs the
pipelines' tracing helpers with tracing off, neither OpenTelemetry's SDK nor an exporter is
ever imported, and the helpers hand back one shared no-op. (Its API may be: FastAPI imports
it for its own telemetry hooks.)"""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """
import sys
from app.main import create_app
from app.settings import Settings
import pipelines.assemble.service, pipelines.consolidate.runner, pipelines.recall.runner
from pipelines import tracing
from pipelines.assemble.run import Clock

app = create_app(Settings())
assert app.state.tracer is None and not tracing.enabled()
assert tracing.span("a") is tracing.statement("spaces/get", "MATCH (n) RETURN n", "neo4j")
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

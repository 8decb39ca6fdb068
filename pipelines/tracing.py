"""Optional spans from inside the pipelines: Neo4j statements, assembly steps, recall steps,
job runs. The app turns them on with :func:`enable` (``MNEMOGRAPH_OTEL``); off, every helper
here is one check of a module global and nothing from OpenTelemetry is imported.

Spans are made current while their work runs, so the statements a step runs nest under it;
:func:`propagating` carries the current span into the read path's executor threads."""

from __future__ import annotations

import contextvars
import re
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

__all__ = [
    "Laps",
    "disable",
    "enable",
    "enabled",
    "operation",
    "propagating",
    "span",
    "statement",
]

P = ParamSpec("P")
T = TypeVar("T")

_tracer: Tracer | None = None
_OFF: AbstractContextManager[None] = nullcontext()


def enable(tracer: Tracer) -> None:
    """Spans from the pipelines go to ``tracer`` from now on (the whole process)."""
    global _tracer
    _tracer = tracer


def disable() -> None:
    global _tracer
    _tracer = None


def enabled() -> bool:
    return _tracer is not None


def span(name: str, **attributes: str | int | float | bool) -> AbstractContextManager[Any]:
    """A span current for the ``with`` block (its value: the span, None when off)."""
    if _tracer is None:
        return _OFF
    return _tracer.start_as_current_span(name, attributes=attributes)


_KEYWORD = re.compile(r"\b([A-Za-z]+)\b")


@lru_cache(maxsize=1024)
def operation(text: str) -> str:
    """``db.operation`` of a statement: its first Cypher keyword (``MATCH``, ``CALL``,
    ``UNWIND`` …) once ``//`` comments are left out; never anything from its parameters."""
    for line in text.splitlines():
        code = line.split("//", 1)[0]
        if (m := _KEYWORD.search(code)) is not None:
            return m.group(1).upper()
    return "UNKNOWN"


def statement(name: str, text: str, database: str) -> AbstractContextManager[Any]:
    """The span of one named statement: named by its ``.cypher`` file, with ``db.system``,
    ``db.operation`` and ``db.namespace`` (the statement's text and parameters never)."""
    if _tracer is None:
        return _OFF
    attributes = {
        "db.system": "neo4j",
        "db.operation": operation(text),
        "db.namespace": database,
        "mnemograph.statement": name,
    }
    return _tracer.start_as_current_span(name, attributes=attributes)


class Laps:
    """Spans laid out by a lap clock: each span is current from one lap to the next and is
    named at its end, when the lap says what ran (``prefix`` + the lap's name), so the code
    timing its steps needs nothing else to trace them. :meth:`close` ends the open one."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._open: tuple[Span, object] | None = None
        self._start()

    def _start(self) -> None:
        if _tracer is None:
            return
        from opentelemetry import context, trace

        opened = _tracer.start_span(f"{self._prefix}step")
        self._open = (opened, context.attach(trace.set_span_in_context(opened)))

    def lap(self, name: str) -> None:
        if self._open is None:
            return
        self._end(name)
        self._start()

    def close(self, name: str) -> None:
        """End the open span as ``name`` (the work after the last lap)."""
        if self._open is not None:
            self._end(name)

    def _end(self, name: str) -> None:
        from opentelemetry import context

        assert self._open is not None
        opened, token = self._open
        self._open = None
        context.detach(token)  # type: ignore[arg-type]
        opened.update_name(f"{self._prefix}{name}")
        opened.end()


class _Propagating(Executor):
    """An executor whose tasks run in the submitter's context (its current span)."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        ctx = contextvars.copy_context()
        return self.inner.submit(lambda: ctx.run(fn, *args, **kwargs))

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.inner.shutdown(wait=wait, cancel_futures=cancel_futures)


def propagating(executor: Executor) -> Executor:
    """``executor`` carrying the current span into its tasks (unwrapped: the same one)."""
    return executor if isinstance(executor, _Propagating) else _Propagating(executor)


@contextmanager
def job_span(job: str, space: str, run_id: str) -> Iterator[Callable[[str], None]]:
    """The span of one job run; the block calls the function it gets with the outcome."""
    if _tracer is None:
        yield lambda outcome: None
        return
    attributes = {"mnemograph.job": job, "mnemograph.space": space, "mnemograph.run_id": run_id}
    with _tracer.start_as_current_span(f"job {job}", attributes=attributes) as opened:
        yield lambda outcome: opened.set_attribute("mnemograph.outcome", outcome)

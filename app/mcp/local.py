"""The engine in this process, for ``mnemograph mcp`` when no API answers: Neo4j (the one
answering at the configured URI, or the managed local runtime, started here) and the
services, brought up in a background thread so the protocol handshake is answered at once.
Tool calls wait for it (a bounded wait, then a retryable ``unavailable``)."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import anyio.to_thread

from app.mcp.backend import Json, ServicesBackend
from app.mcp.errors import ToolFailure
from app.services import Services, build_services, engine_settings
from app.settings import Settings
from neo4j_runtime import runtime
from neo4j_runtime.__main__ import dev_instance
from neo4j_runtime.settings import InstanceConfig
from pipelines import spaces
from pipelines.engine import Engine, load_models

log = logging.getLogger("mnemograph.mcp")

#: Longest a tool call waits for the start-up before it answers ``unavailable`` (desktop
#: clients give up on a call after about a minute).
CALL_WAIT_SECONDS = 40.0
NEO4J_START_SECONDS = 240.0


def _bolt_open(uri: str) -> bool:
    parts = urlsplit(uri)
    return bool(parts.hostname) and runtime.port_open(parts.hostname or "", parts.port or 7687)


class LocalEngine:
    """Neo4j and the services of this process; :meth:`close` stops what it started."""

    def __init__(self, settings: Settings, space: str | None = None) -> None:
        self.settings = settings
        self.space = space  # the tools' default space: created if missing
        self.services: Services | None = None
        self.engine: Engine | None = None
        self.error: str | None = None
        self.instance: InstanceConfig | None = None  # the Neo4j started here, if any
        self.ready = threading.Event()
        self._closing = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._start, name="mcp-engine", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _start(self) -> None:
        t0 = time.monotonic()
        try:
            inst = self._launch_neo4j()
            models = load_models(engine_settings(self.settings))  # while the JVM boots
            if inst is not None:
                runtime.start(inst, timeout=NEO4J_START_SECONDS, quiet=True)  # waits for it
                log.warning("Neo4j ready after %.1fs", time.monotonic() - t0)
            self.engine = Engine.start(engine_settings(self.settings), models=models)
            self.services = build_services(self.settings, self.engine)
            if self.space:
                spaces.create(self.engine.store, spaces.NewSpace(id=self.space))
            log.warning("Mnemograph engine ready after %.1fs", time.monotonic() - t0)
        except Exception as exc:  # told to every tool call, and to stderr
            self.error = f"{type(exc).__name__}: {exc}"
            log.error("Mnemograph could not start: %s", self.error)
        finally:
            self.ready.set()

    def _launch_neo4j(self) -> InstanceConfig | None:
        """Use the Neo4j answering at the configured URI; launch the local runtime (not yet
        waiting for it) when that URI is the runtime's own address and nothing answers."""
        inst = dev_instance()
        if "neo4j_uri" not in self.settings.model_fields_set:  # unset: the runtime's address
            self.settings.neo4j_uri = inst.bolt_uri
        uri = self.settings.neo4j_uri
        if uri == inst.bolt_uri and inst.auth and not self.settings.neo4j_user:
            self.settings.neo4j_user, self.settings.neo4j_password = inst.auth
        if _bolt_open(uri):
            log.warning("Neo4j at %s answers: using it", uri)
            return None
        if inst.bolt_uri != uri:
            raise runtime.RuntimeErrorWithHint(
                f"Neo4j at {uri} does not answer (MNEMOGRAPH_NEO4J_URI); only the local runtime "
                f"at {inst.bolt_uri} is started automatically"
            )
        log.warning("starting Neo4j + GDS at %s (data in %s)", uri, inst.data_dir)
        started = runtime.start(inst, wait=False, quiet=True)
        self.instance = None if started.reused else inst  # stopped on close, even mid-start
        return inst

    async def backend(self) -> ServicesBackend:
        """The services once started (waiting at most :data:`CALL_WAIT_SECONDS`)."""
        if not self.ready.is_set():
            await anyio.to_thread.run_sync(self.ready.wait, CALL_WAIT_SECONDS)
        if self.error is not None:
            message = f"Mnemograph could not start: {self.error}; fix it, restart the server"
            raise ToolFailure("unavailable", message, may_have_committed=False)
        services = self.services
        if services is None:
            raise ToolFailure("unavailable", "Mnemograph is still starting (Neo4j and the "
                              "models); retry in a few seconds", may_have_committed=False,
                              retry_after=5)  # fmt: skip
        return ServicesBackend(lambda: services)

    def close(self) -> None:
        """Wait for a start-up in progress, close the services, stop a Neo4j started here.
        Idempotent (the end of stdin and a signal may both ask)."""
        with self._closing:
            if self._closed:
                return
            self._closed = True
            self._close()

    def _close(self) -> None:
        if self._thread.is_alive():
            if self.instance is not None:  # still booting: stopping it ends the wait at once
                runtime.stop(self.instance)
            self._thread.join()
        if self.services is not None:
            self.services.close()
        if self.engine is not None:
            self.engine.close()
        if self.instance is not None:
            runtime.stop(self.instance)
            log.warning("Neo4j stopped")


class DeferredBackend:
    """The :class:`~app.mcp.backend.Backend` of a :class:`LocalEngine`, once it is up."""

    def __init__(self, engine: LocalEngine) -> None:
        self.engine = engine

    async def list_spaces(self, allowed: frozenset[str] | None) -> list[Json]:
        return await (await self.engine.backend()).list_spaces(allowed)

    async def add_session(self, space: str, session: Json) -> Json:
        return await (await self.engine.backend()).add_session(space, session)

    async def add_memories(self, space: str, memories: list[Json]) -> Json:
        return await (await self.engine.backend()).add_memories(space, memories)

    async def recall(self, space: str, query: str, k: int) -> Json:
        return await (await self.engine.backend()).recall(space, query, k)

    async def context(self, space: str, query: str, context_window: int) -> Json:
        return await (await self.engine.backend()).context(space, query, context_window)

    async def forget(self, space: str, memory_id: str) -> Json:
        return await (await self.engine.backend()).forget(space, memory_id)

    async def correct(self, space: str, memory_id: str, content: str, reason: str) -> Json:
        return await (await self.engine.backend()).correct(space, memory_id, content, reason)


def default_neo4j_dir() -> Path:
    """Where the managed Neo4j keeps its data when MNEMOGRAPH_NEO4J_DIR is unset: the
    checkout's ``.mnemograph/neo4j`` (as ``make serve`` uses) when running from one, else
    ``~/.local/share/mnemograph/neo4j`` (a desktop client starts us in any directory)."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").exists():
        return root / ".mnemograph" / "neo4j"
    return Path.home() / ".local" / "share" / "mnemograph" / "neo4j"

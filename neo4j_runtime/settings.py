"""Versions and Neo4j settings shared by the local runtime and docker-compose.yml.

This module is the single source of truth: ``tests/integration/test_runtime_config.py`` checks
that docker-compose.yml sets the same values, so the Docker and the no-Docker paths behave alike.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

NEO4J_VERSION = "5.26.23"
GDS_VERSION = "2.13.9"
# Maven 3.8's default dependency plugin (2.8) cannot copy-dependencies reliably: always name 3.x.
MAVEN_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"

# Settings that both runtimes use (docker-compose passes them as NEO4J_* environment variables).
SHARED_SETTINGS: dict[str, str] = {
    "dbms.security.procedures.unrestricted": "gds.*",
    "dbms.usage_report.enabled": "false",
    "server.memory.heap.initial_size": "1g",
    "server.memory.heap.max_size": "2g",
    "server.memory.pagecache.size": "1g",
}

# JVM flags the Neo4j launcher would apply from server.jvm.additional. We start the server's
# entry point directly (one process, clean signals), so we must pass them ourselves: without
# --add-opens java.nio the vector index population stalls silently.
JVM_FLAGS: tuple[str, ...] = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
    "--add-opens=java.base/java.util.stream=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "--add-modules=jdk.incubator.vector",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
)

ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"


def cache_root() -> Path:
    """Where resolved jars live: outside the repository, shared by every checkout."""
    base = os.environ.get("MNEMOGRAPH_RUNTIME_CACHE") or os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    if not os.environ.get("MNEMOGRAPH_RUNTIME_CACHE"):
        root = root / "mnemograph"
    return root / f"neo4j-{NEO4J_VERSION}-gds-{GDS_VERSION}"


@dataclass(frozen=True)
class InstanceConfig:
    """One Neo4j instance: where its data lives and where it listens."""

    name: str
    base_dir: Path
    bolt_port: int = 7687
    host: str = "127.0.0.1"
    heap_initial: str = SHARED_SETTINGS["server.memory.heap.initial_size"]
    heap_max: str = SHARED_SETTINGS["server.memory.heap.max_size"]
    pagecache: str = SHARED_SETTINGS["server.memory.pagecache.size"]
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def bolt_uri(self) -> str:
        return f"bolt://{self.host}:{self.bolt_port}"

    @property
    def conf_dir(self) -> Path:
        return self.base_dir / "conf"

    @property
    def data_dir(self) -> Path:
        return self.base_dir / "data"

    @property
    def logs_dir(self) -> Path:
        return self.base_dir / "logs"

    @property
    def run_dir(self) -> Path:
        return self.base_dir / "run"

    @property
    def pid_file(self) -> Path:
        return self.run_dir / "mnemograph-neo4j.pid"

    @property
    def console_log(self) -> Path:
        return self.logs_dir / "console.log"

    def settings(self, home: Path) -> dict[str, str]:
        """The neo4j.conf content for this instance."""
        values = dict(SHARED_SETTINGS)
        values.update(
            {
                "server.default_listen_address": self.host,
                "server.bolt.enabled": "true",
                "server.bolt.listen_address": f"{self.host}:{self.bolt_port}",
                "server.http.enabled": "false",
                "server.https.enabled": "false",
                "dbms.security.auth_enabled": "false",
                "server.directories.data": str(self.data_dir),
                "server.directories.logs": str(self.logs_dir),
                "server.directories.run": str(self.run_dir),
                "server.directories.import": str(self.base_dir / "import"),
                "server.directories.plugins": str(home / "plugins"),
                "server.directories.lib": str(home / "lib"),
                "server.memory.heap.initial_size": self.heap_initial,
                "server.memory.heap.max_size": self.heap_max,
                "server.memory.pagecache.size": self.pagecache,
            }
        )
        values.update(self.extra)
        return values

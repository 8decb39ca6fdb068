"""Versions and Neo4j settings shared by the local runtime and docker-compose.yml.

This module is the single source of truth: ``tests/unit/test_compose_sync.py`` checks that
docker-compose.yml sets the same values, so the Docker and the no-Docker paths behave alike.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from neo4j_runtime.password import stored_password

NEO4J_VERSION = "5.26.23"
GDS_VERSION = "2.13.9"
# The newest Neo4j Browser on Maven Central (checked against 5.26 by `make browser-check`).
BROWSER_VERSION = "5.24.0"
# Neo4j's built-in user; auth (always on) is for this user, see neo4j_runtime/auth.py.
NEO4J_USER = "neo4j"
# Maven 3.8's default dependency plugin (2.8) cannot copy-dependencies reliably: always name 3.x.
MAVEN_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"

# Settings that both runtimes use (docker-compose passes them as NEO4J_* environment variables).
SHARED_SETTINGS: dict[str, str] = {
    "dbms.security.procedures.unrestricted": "gds.*",
    "dbms.usage_report.enabled": "false",
    "server.memory.heap.initial_size": "1g",
    "server.memory.heap.max_size": "2g",
    "server.memory.pagecache.size": "1g",
    # Browser (and Bloom) would otherwise report product analytics to a third party.
    "client.allow_telemetry": "false",
}

WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``; a name or a wildcard is not loopback."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def browser_settings(guide_url: str | None, style_url: str | None) -> dict[str, str]:
    """Browser's settings for a guide and a style served elsewhere: on connecting, Browser applies
    the style and opens the guide; the allow-list names the hosts Browser may fetch them from."""
    urls = [u for u in (style_url, guide_url) if u]
    if not urls:
        return {}
    commands = ([f"style {style_url}"] if style_url else []) + (
        [f"guide {guide_url}"] if guide_url else []
    )
    hosts = sorted({urlsplit(u).hostname or "" for u in urls} - {""})
    return {
        "browser.post_connect_cmd": "; ".join(commands),
        "browser.remote_content_hostname_whitelist": ",".join(hosts),
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
    """Where resolved jars live: outside the repository, shared by every checkout (Browser is
    resolved into ``browser/`` of the same directory, see runtime.fetch)."""
    base = os.environ.get("MNEMOGRAPH_RUNTIME_CACHE") or os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    if not os.environ.get("MNEMOGRAPH_RUNTIME_CACHE"):
        root = root / "mnemograph"
    return root / f"neo4j-{NEO4J_VERSION}-gds-{GDS_VERSION}"


@dataclass(frozen=True)
class InstanceConfig:
    """One Neo4j instance: where its data lives and where it listens.

    ``http_port`` turns on the HTTP connector and with it Neo4j Browser at ``/browser/`` (None:
    Bolt only, as tests and benchmarks run). Authentication is always on, for the user
    ``neo4j``: ``password`` is its password, or None for the one generated once into
    ``<base_dir>/neo4j-password`` (owner-only; resolved when the config is made, so
    :attr:`auth` always names the credentials). Only ``extra`` can turn authentication off
    (``dbms.security.auth_enabled=false``: tests recreate a database of the time before
    it was always on), and :meth:`check` refuses that beyond loopback.
    ``advertised_host`` is the name clients are told to connect to (Browser uses it for its
    Bolt connection); by default the listen address, or ``localhost`` for a wildcard.
    """

    name: str
    base_dir: Path
    bolt_port: int = 7687
    host: str = "127.0.0.1"
    http_port: int | None = None
    advertised_host: str | None = None
    password: str | None = field(default=None, repr=False)
    guide_url: str | None = None
    style_url: str | None = None
    heap_initial: str = SHARED_SETTINGS["server.memory.heap.initial_size"]
    heap_max: str = SHARED_SETTINGS["server.memory.heap.max_size"]
    pagecache: str = SHARED_SETTINGS["server.memory.pagecache.size"]
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.password is None and self.auth_enabled:
            object.__setattr__(self, "password", stored_password(self.base_dir))

    @property
    def auth_enabled(self) -> bool:
        return self.extra.get("dbms.security.auth_enabled", "true").lower() != "false"

    @property
    def connect_host(self) -> str:
        """Where a client on this machine connects (a wildcard listen address is not one)."""
        return "127.0.0.1" if self.host in WILDCARD_HOSTS else self.host

    @property
    def public_host(self) -> str:
        if self.advertised_host:
            return self.advertised_host
        return "localhost" if self.host in WILDCARD_HOSTS else self.host

    @property
    def bolt_uri(self) -> str:
        return f"bolt://{self.connect_host}:{self.bolt_port}"

    @property
    def auth(self) -> tuple[str, str] | None:
        """The driver's credentials (None only for a database with authentication off)."""
        return (NEO4J_USER, self.password) if self.auth_enabled and self.password else None

    @property
    def browser_url(self) -> str | None:
        """The Browser page; without auth it opens with "No authentication" preselected."""
        if self.http_port is None:
            return None
        url = f"http://{_url_host(self.public_host)}:{self.http_port}/browser/"
        return url if self.auth else url + "?preselectAuthMethod=NO_AUTH"

    def check(self) -> None:
        """Refuse an instance that listens beyond loopback without authentication."""
        if not is_loopback(self.host) and not self.auth_enabled:
            raise ValueError(
                f"Neo4j would listen on {self.host!r} without authentication: turn it on "
                "(it is on unless dbms.security.auth_enabled=false) or listen on loopback only"
            )
        if self.auth_enabled and len(self.password or "") < 8:
            raise ValueError("the Neo4j password must have at least 8 characters")

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
        listen, public = _url_host(self.host), _url_host(self.public_host)
        values.update(
            {
                "server.default_listen_address": self.host,
                "server.default_advertised_address": self.public_host,
                "server.bolt.enabled": "true",
                "server.bolt.listen_address": f"{listen}:{self.bolt_port}",
                "server.bolt.advertised_address": f"{public}:{self.bolt_port}",
                "server.http.enabled": "true" if self.http_port is not None else "false",
                "server.https.enabled": "false",
                "dbms.security.auth_enabled": "true",
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
        if self.http_port is not None:
            values["server.http.listen_address"] = f"{listen}:{self.http_port}"
            values["server.http.advertised_address"] = f"{public}:{self.http_port}"
            values.update(browser_settings(self.guide_url, self.style_url))
        values.update(self.extra)
        return values


def _url_host(host: str) -> str:
    """An IPv6 literal in brackets, as addresses and URLs want it."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host

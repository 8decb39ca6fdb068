"""Fetch, start, probe and stop a local Neo4j 5.26 Community + GDS 2.13 server without Docker.

The server is assembled from Maven Central artifacts (``maven/*/pom.xml``) into a user cache
directory, then started as one JVM running Neo4j's ``CommunityEntryPoint`` with the plugin jars
first on the classpath (GDS registers itself through ServiceLoader, so it must be on the
classpath, not only in plugins/), and Neo4j Browser's jar last (the HTTP connector serves the
``browser/`` assets it finds on the classpath at ``/browser/``). Nothing here is specific to
Mnemograph's data model.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from neo4j_runtime import auth
from neo4j_runtime import settings as S
from neo4j_runtime.password import private_dir

_MAVEN_DIR = Path(__file__).parent / "maven"
_COMPLETE_MARKER = ".complete"
BROWSER_DIR = "browser"  # Browser's jar, resolved beside lib/ and plugins/ (own marker)

_LOG_CONFIG = """<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="ERROR" monitorInterval="0" packages="org.neo4j.logging.log4j">
  <Appenders>
    <RollingRandomAccessFile name="Log" fileName="${config:server.directories.logs}/neo4j.log"
        filePattern="$${config:server.directories.logs}/neo4j.log.%02i">
      <Neo4jDebugLogLayout pattern="%d{yyyy-MM-dd HH:mm:ss.SSSZ}{GMT+0} %-5p %m%n"/>
      <Policies><SizeBasedTriggeringPolicy size="20 MB"/></Policies>
      <DefaultRolloverStrategy fileIndex="min" max="3"/>
    </RollingRandomAccessFile>
  </Appenders>
  <Loggers><Root level="INFO"><AppenderRef ref="Log"/></Root></Loggers>
</Configuration>
"""


class RuntimeErrorWithHint(RuntimeError):
    """A failure with a message a person can act on."""


# --------------------------------------------------------------------------------------------
# Java
# --------------------------------------------------------------------------------------------


def _java_major(java: Path) -> int | None:
    try:
        out = subprocess.run(
            [str(java), "-version"], capture_output=True, text=True, timeout=30
        ).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major


def find_java() -> Path:
    """Return a Java 17 or 21 binary (Neo4j 5.26 supports nothing else).

    Order: ``MNEMOGRAPH_JAVA_HOME``, ``JAVA_HOME`` (if 17/21), the Debian/Ubuntu OpenJDK 17 and
    21 locations, then ``java`` on PATH (if 17/21).
    """
    candidates: list[Path] = []
    for var in ("MNEMOGRAPH_JAVA_HOME", "JAVA_HOME"):
        if os.environ.get(var):
            candidates.append(Path(os.environ[var]) / "bin" / "java")
    jvm = Path("/usr/lib/jvm")
    if jvm.is_dir():
        for pattern in ("java-17-openjdk*", "*17*", "java-21-openjdk*", "*21*"):
            candidates.extend(sorted(p / "bin" / "java" for p in jvm.glob(pattern)))
    for mac in Path("/Library/Java/JavaVirtualMachines").glob("*1[7]*/Contents/Home/bin/java"):
        candidates.append(mac)
    on_path = shutil.which("java")
    if on_path:
        candidates.append(Path(on_path))
    seen: set[Path] = set()
    for cand in candidates:
        if cand in seen or not cand.exists():
            continue
        seen.add(cand)
        if _java_major(cand) in (17, 21):
            return cand
    raise RuntimeErrorWithHint(
        "Neo4j 5.26 needs Java 17 or 21 and none was found. Install OpenJDK 17 "
        "(Debian/Ubuntu: apt-get install openjdk-17-jdk-headless) or set MNEMOGRAPH_JAVA_HOME."
    )


# --------------------------------------------------------------------------------------------
# Fetch (Maven Central -> user cache)
# --------------------------------------------------------------------------------------------


def runtime_home() -> Path:
    return S.cache_root()


def is_fetched(home: Path | None = None) -> bool:
    home = home or runtime_home()
    return (home / _COMPLETE_MARKER).exists() and _browser_fetched(home)


def _browser_fetched(home: Path) -> bool:
    marker = home / BROWSER_DIR / _COMPLETE_MARKER
    return marker.exists() and marker.read_text().strip() == S.BROWSER_VERSION


def _maven(module: str, target: Path, *, quiet: bool) -> None:
    """Copy the runtime dependencies of ``maven/<module>/pom.xml`` into ``target``."""
    mvn = shutil.which("mvn")
    if not mvn:
        raise RuntimeErrorWithHint(
            "Maven ('mvn') is needed once to resolve Neo4j, GDS and Browser from Maven Central. "
            "Install it (apt-get install maven) or use docker-compose.yml instead."
        )
    java = find_java()
    cmd = [
        mvn,
        "-B",
        "-q" if quiet else "-ntp",
        "-f",
        str(_MAVEN_DIR / module / "pom.xml"),
        f"-Dneo4j.version={S.NEO4J_VERSION}",
        f"-Dgds.version={S.GDS_VERSION}",
        f"-Dbrowser.version={S.BROWSER_VERSION}",
        f"{S.MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={target}",
    ]
    if not quiet:
        print(f"[neo4j-runtime] resolving {module} from Maven Central ...", flush=True)
    env = dict(os.environ, JAVA_HOME=str(java.parent.parent))
    proc = subprocess.run(cmd, env=env, capture_output=quiet, text=True)
    if proc.returncode != 0:
        detail = (proc.stdout or "")[-2000:] + (proc.stderr or "")[-2000:] if quiet else ""
        raise RuntimeErrorWithHint(f"Maven resolve of {module} failed.\n{detail}")


def _fetch_browser(home: Path, *, quiet: bool) -> None:
    """Resolve Browser into ``home/browser`` (a cache made before Browser was added gets it too)."""
    staging = Path(tempfile.mkdtemp(prefix=BROWSER_DIR + ".", dir=home))
    try:
        _maven("browser", staging, quiet=quiet)
        if not any(staging.glob("neo4j-browser-*.jar")):
            raise RuntimeErrorWithHint("Browser resolve produced no neo4j-browser jar")
        (staging / _COMPLETE_MARKER).write_text(S.BROWSER_VERSION + "\n")
        target = home / BROWSER_DIR
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        try:
            staging.rename(target)
        except OSError:
            if not _browser_fetched(home):  # not another process's complete copy: a failure
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def fetch(home: Path | None = None, *, quiet: bool = False) -> Path:
    """Resolve Neo4j, GDS and Browser jars into ``home`` (idempotent; a second call is instant)."""
    home = home or runtime_home()
    if is_fetched(home):
        return home
    if (home / _COMPLETE_MARKER).exists():
        _fetch_browser(home, quiet=quiet)
        return home
    home.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=home.name + ".", dir=home.parent))
    try:
        for module, target in (("neo4j", "lib"), ("gds", "plugins")):
            _maven(module, staging / target, quiet=quiet)
        lib_names = {p.name for p in (staging / "lib").glob("*.jar")}
        # plugins/ comes first on the classpath: a GDS copy of a jar Neo4j already ships would
        # shadow Neo4j's own. Same file name = same artifact and version, so keep Neo4j's.
        for jar in (staging / "plugins").glob("*.jar"):
            if jar.name in lib_names:
                jar.unlink()
        if not any((staging / "plugins").glob("gds-*")) and not any(
            (staging / "plugins").glob("proc-*.jar")
        ):
            raise RuntimeErrorWithHint("GDS resolve produced no procedure jars")
        _fetch_browser(staging, quiet=quiet)
        (staging / _COMPLETE_MARKER).write_text(f"{S.NEO4J_VERSION} {S.GDS_VERSION}\n")
        if home.exists():
            shutil.rmtree(home)
        staging.rename(home)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return home


# --------------------------------------------------------------------------------------------
# Start / stop
# --------------------------------------------------------------------------------------------


def write_config(instance: S.InstanceConfig, home: Path) -> None:
    """neo4j.conf and the instance's directories, all owner-only (0700): the data, the logs
    (they may quote queries) and the password file are for the owner alone."""
    private_dir(instance.base_dir)
    for d in (
        instance.conf_dir,
        instance.data_dir,
        instance.logs_dir,
        instance.run_dir,
        instance.base_dir / "import",
    ):
        private_dir(d)
    lines = [f"{k}={v}" for k, v in sorted(instance.settings(home).items())]
    log_cfg = instance.conf_dir / "server-logs.xml"
    log_cfg.write_text(_LOG_CONFIG)
    lines.append(f"server.logs.config={log_cfg}")
    (instance.conf_dir / "neo4j.conf").write_text(
        "# Written by neo4j_runtime; edit neo4j_runtime/settings.py instead.\n"
        + "\n".join(lines)
        + "\n"
    )


def java_command(instance: S.InstanceConfig, home: Path, java: Path) -> list[str]:
    classpath = os.pathsep.join(f"{home / part}/*" for part in ("plugins", "lib", BROWSER_DIR))
    return [
        str(java),
        *S.JVM_FLAGS,
        f"-Xms{instance.heap_initial}",
        f"-Xmx{instance.heap_max}",
        "-cp",
        classpath,
        S.ENTRY_POINT,
        f"--home-dir={home}",
        f"--config-dir={instance.conf_dir}",
        "--console-mode",
    ]


def _read_pid(instance: S.InstanceConfig) -> int | None:
    try:
        pid = int(instance.pid_file.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    # A recycled pid belonging to something else is not our server.
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        if S.ENTRY_POINT not in cmdline:
            return None
    except OSError:
        pass
    return pid


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=timeout):
        return True
    return False


@dataclass
class Started:
    pid: int
    bolt_uri: str
    reused: bool
    seconds: float


def start(
    instance: S.InstanceConfig, *, wait: bool = True, timeout: float = 180.0, quiet: bool = False
) -> Started:
    """Start the instance in the background (idempotent) and wait until it answers GDS queries.

    Authentication is on: a fresh database gets the password before its first start, an older
    one created without authentication has its initial password replaced.
    """
    t0 = time.monotonic()
    try:
        instance.check()
    except ValueError as exc:
        raise RuntimeErrorWithHint(str(exc)) from None
    pid = _read_pid(instance)
    if pid is not None:
        if wait:
            _wait_secured(instance, timeout, pid)
        return Started(pid, instance.bolt_uri, True, time.monotonic() - t0)
    for port, variable in ((instance.bolt_port, "PORT"), (instance.http_port, "HTTP_PORT")):
        if port is not None and port_open(instance.connect_host, port):
            raise RuntimeErrorWithHint(
                f"Port {port} is already in use by another process. Stop it or choose another "
                f"port (MNEMOGRAPH_NEO4J_{variable})."
            )
    home = fetch(quiet=quiet)
    java = find_java()
    write_config(instance, home)
    if instance.auth and not auth.is_initialized(instance):
        auth.set_initial_password(instance, home, java, instance.auth[1])
    cmd = java_command(instance, home, java)
    log = open(instance.console_log, "ab")  # noqa: SIM115 - handed to the child process
    proc = subprocess.Popen(
        cmd,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # Ctrl-C in the caller's terminal is handled by stop()
        env=dict(os.environ, JAVA_HOME=str(java.parent.parent)),
    )
    log.close()
    instance.pid_file.write_text(str(proc.pid))
    if wait:
        try:
            _wait_secured(instance, timeout, proc.pid)
        except BaseException:
            stop(instance)
            raise
    return Started(proc.pid, instance.bolt_uri, False, time.monotonic() - t0)


def _wait_secured(instance: S.InstanceConfig, timeout: float, pid: int) -> None:
    """:func:`wait_ready` with the instance's credentials; replaces Neo4j's initial password
    when the database was created without authentication."""
    log = instance.console_log
    try:
        wait_ready(instance.bolt_uri, timeout=timeout, pid=pid, log=log, auth=instance.auth)
        return
    except AuthFailed:
        if not instance.auth or not auth.change_initial_password(
            instance.bolt_uri, instance.auth[1]
        ):
            raise RuntimeErrorWithHint(
                f"Neo4j at {instance.bolt_uri} refused the password for user "
                f"{S.NEO4J_USER!r}: its database was secured with another one. Give that "
                "password (MNEMOGRAPH_NEO4J_PASSWORD) or start from a new data directory."
            ) from None
    wait_ready(instance.bolt_uri, timeout=timeout, pid=pid, log=log, auth=instance.auth)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # Reap it if it is our own zombie child.
    with contextlib.suppress(ChildProcessError, OSError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    return True


def stop(instance: S.InstanceConfig, timeout: float = 60.0) -> bool:
    """Stop the instance cleanly (SIGTERM, then SIGKILL after ``timeout``). True if it ran."""
    pid = _read_pid(instance)
    if pid is None:
        instance.pid_file.unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.2)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    instance.pid_file.unlink(missing_ok=True)
    return True


def status(instance: S.InstanceConfig) -> dict[str, object]:
    pid = _read_pid(instance)
    return {
        "running": pid is not None,
        "pid": pid,
        "bolt_uri": instance.bolt_uri,
        "bolt_open": port_open(instance.connect_host, instance.bolt_port),
        "browser_url": instance.browser_url,
        "auth": f"user {S.NEO4J_USER!r}" if instance.auth else "off",
        "data_dir": str(instance.data_dir),
        "runtime_cache": str(runtime_home()),
        "fetched": is_fetched(),
    }


# --------------------------------------------------------------------------------------------
# Readiness
# --------------------------------------------------------------------------------------------


_SMOKE_GRAPH = "mnemograph_readiness_probe"


class AuthFailed(RuntimeErrorWithHint):
    """Neo4j answered but refused the credentials."""


def smoke(uri: str, auth: tuple[str, str] | None = None) -> dict[str, object]:
    """Prove GDS works: version, procedure count, a tiny Personalized PageRank and a Leiden run.

    The graph is projected from literal integer ids, so the probe leaves nothing in the database.
    """
    from neo4j import GraphDatabase  # local import: `fetch` must work without the driver

    import cypher

    with GraphDatabase.driver(uri, auth=auth) as driver:

        def q(statement: str, **params: object) -> list[dict[str, object]]:
            records = driver.execute_query(
                cypher.load(f"runtime/{statement}"), params, database_="neo4j"
            ).records
            return [r.data() for r in records]

        version = q("server_version")[0]["v"]
        gds_version = q("gds_version")[0]["v"]
        procedures = q("gds_procedures")[0]["n"]
        q("probe_drop", g=_SMOKE_GRAPH)
        try:
            q("probe_project", g=_SMOKE_GRAPH)
            ppr = q("probe_pagerank", g=_SMOKE_GRAPH)
            leiden = q("probe_leiden", g=_SMOKE_GRAPH)
        finally:
            q("probe_drop", g=_SMOKE_GRAPH)
    if len(ppr) != 4 or ppr[0]["nodeId"] != 2:
        raise RuntimeErrorWithHint(f"GDS PageRank smoke test gave unexpected results: {ppr}")
    return {
        "neo4j_version": version,
        "gds_version": gds_version,
        "gds_procedures": procedures,
        "ppr_top_node": ppr[0]["nodeId"],
        "leiden_communities": leiden[0]["c"],
    }


def wait_ready(
    uri: str,
    *,
    timeout: float = 180.0,
    pid: int | None = None,
    log: Path | None = None,
    auth: tuple[str, str] | None = None,
) -> dict[str, object]:
    """Poll the Bolt port, then run :func:`smoke` until it passes or ``timeout`` expires.
    Refused credentials end the wait at once (:class:`AuthFailed`)."""
    from neo4j.exceptions import AuthError

    host, port = uri.removeprefix("bolt://").rsplit(":", 1)
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if pid is not None and not _alive(pid):
            tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
            raise RuntimeErrorWithHint(f"Neo4j exited during start-up. Last log lines:\n{tail}")
        if port_open(host, int(port)):
            try:
                return smoke(uri, auth)
            except AuthError as exc:
                raise AuthFailed(f"Neo4j at {uri} refused the credentials: {exc}") from None
            except Exception as exc:  # server still starting: databases not yet online
                last_error = exc
        time.sleep(0.5)
    see = f" See {log}" if log else ""
    raise RuntimeErrorWithHint(
        f"Neo4j at {uri} was not ready within {timeout:.0f}s (last error: {last_error}).{see}"
    )


def main_error(exc: Exception) -> int:
    print(f"[neo4j-runtime] error: {exc}", file=sys.stderr)
    return 2

"""Command line for the local Neo4j + GDS runtime.

    python -m neo4j_runtime fetch               # resolve jars into the user cache (once)
    python -m neo4j_runtime start [--foreground] # start the dev instance, wait until ready
    python -m neo4j_runtime stop | status | smoke

The dev instance keeps its data in ``.mnemograph/neo4j`` of the checkout (override with
MNEMOGRAPH_NEO4J_DIR), listens on 127.0.0.1 (MNEMOGRAPH_NEO4J_LISTEN) for Bolt on 7687
(MNEMOGRAPH_NEO4J_PORT) and for Neo4j Browser on 7474 (MNEMOGRAPH_NEO4J_HTTP_PORT, ``off``
disables it). Authentication is always on, on loopback too (user ``neo4j``): the password is
MNEMOGRAPH_NEO4J_PASSWORD, or one generated into ``<data dir>/neo4j-password`` (owner-only).
Browser opens the Mnemograph guide served by the API (MNEMOGRAPH_HOST / MNEMOGRAPH_PORT, default
127.0.0.1:8000) once logged in.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

from neo4j_runtime import auth, runtime
from neo4j_runtime.settings import (
    GDS_VERSION,
    NEO4J_USER,
    NEO4J_VERSION,
    WILDCARD_HOSTS,
    InstanceConfig,
)

# Where the API serves Browser's guide and style (app/routers/browser.py serves these paths).
GUIDE_PATH = "/browser/guide"
STYLE_PATH = "/browser/style.grass"


def api_base_url(host: str | None = None, port: int | None = None, public_host: str = "") -> str:
    """The API's address as a browser on this machine reaches it (a wildcard bind is reached
    through ``public_host``)."""
    host = host or os.environ.get("MNEMOGRAPH_HOST") or "127.0.0.1"
    port = port or int(os.environ.get("MNEMOGRAPH_PORT") or 8000)
    if host in WILDCARD_HOSTS:
        host = public_host or "127.0.0.1"
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def _dev_dir() -> Path:
    env = os.environ
    return Path(env.get("MNEMOGRAPH_NEO4J_DIR") or Path.cwd() / ".mnemograph" / "neo4j").resolve()


def dev_login(uri: str) -> tuple[str, str] | None:
    """The credentials of the dev instance (`make neo4j`) if ``uri`` is its Bolt address:
    MNEMOGRAPH_NEO4J_PASSWORD, or its generated password (read, never created here); else
    None."""
    port = os.environ.get("MNEMOGRAPH_NEO4J_PORT") or "7687"
    host = os.environ.get("MNEMOGRAPH_NEO4J_LISTEN") or "127.0.0.1"
    local = {f"bolt://{h}:{port}" for h in ("127.0.0.1", "localhost", host)}
    path = auth.password_path(_dev_dir())
    if uri.rstrip("/") not in local:
        return None
    if os.environ.get("MNEMOGRAPH_NEO4J_PASSWORD"):
        return NEO4J_USER, os.environ["MNEMOGRAPH_NEO4J_PASSWORD"]
    if not path.exists():
        return None
    return NEO4J_USER, auth.stored_password(_dev_dir())


def dev_instance(api_url: str | None = None) -> InstanceConfig:
    """The instance `make neo4j` and `make serve` run, configured from the environment."""
    env = os.environ
    base = _dev_dir()
    host = env.get("MNEMOGRAPH_NEO4J_LISTEN") or "127.0.0.1"
    http = (env.get("MNEMOGRAPH_NEO4J_HTTP_PORT") or "7474").strip().lower()
    advertised = env.get("MNEMOGRAPH_NEO4J_ADVERTISED_HOST") or None
    password = env.get("MNEMOGRAPH_NEO4J_PASSWORD") or None  # None: the generated one
    inst = InstanceConfig(
        name="dev",
        base_dir=base,
        bolt_port=int(env.get("MNEMOGRAPH_NEO4J_PORT") or 7687),
        host=host,
        http_port=None if http in ("off", "0", "false", "none") else int(http),
        advertised_host=advertised,
        password=password,
    )
    api = (api_url or api_base_url(public_host=inst.public_host)).rstrip("/")
    return replace(inst, guide_url=api + GUIDE_PATH, style_url=api + STYLE_PATH)


def describe(inst: InstanceConfig) -> list[str]:
    """What a person needs to connect: the Browser address and the credentials."""
    lines = []
    if inst.browser_url:
        lines.append(f"Neo4j Browser: {inst.browser_url}")
    if inst.auth:
        where = (
            "MNEMOGRAPH_NEO4J_PASSWORD"
            if os.environ.get("MNEMOGRAPH_NEO4J_PASSWORD")
            else f"{auth.password_path(inst.base_dir)} (owner-only; cat it)"
        )
        lines.append(f"Neo4j login: user {NEO4J_USER!r}, password in {where}")
    else:
        lines.append("Neo4j auth: off; in Browser choose 'No authentication'")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m neo4j_runtime", description=__doc__)
    parser.add_argument("command", choices=["fetch", "start", "stop", "status", "smoke"])
    parser.add_argument(
        "--foreground", action="store_true", help="start, then stay attached; Ctrl-C stops it"
    )
    parser.add_argument("--timeout", type=float, default=180.0)
    args = parser.parse_args(argv)
    inst = dev_instance()
    try:
        if args.command == "fetch":
            t0 = time.monotonic()
            home = runtime.fetch()
            print(
                f"Neo4j {NEO4J_VERSION} + GDS {GDS_VERSION} in {home} "
                f"({time.monotonic() - t0:.1f}s)"
            )
        elif args.command == "start":
            started = runtime.start(inst, timeout=args.timeout)
            info = runtime.smoke(inst.bolt_uri, inst.auth)
            how = "already running" if started.reused else f"started in {started.seconds:.1f}s"
            print(
                f"Neo4j {info['neo4j_version']} + GDS {info['gds_version']} {how}: "
                f"{inst.bolt_uri} (pid {started.pid}, data {inst.data_dir})"
            )
            for line in describe(inst):
                print(line)
            if args.foreground:

                def _stop(*_: object) -> None:
                    runtime.stop(inst)
                    sys.exit(0)

                signal.signal(signal.SIGINT, _stop)
                signal.signal(signal.SIGTERM, _stop)
                while runtime.status(inst)["running"]:
                    time.sleep(1)
                return 1
        elif args.command == "stop":
            print("stopped" if runtime.stop(inst) else "not running")
        elif args.command == "status":
            print(json.dumps(runtime.status(inst), indent=2))
        elif args.command == "smoke":
            print(json.dumps(runtime.smoke(inst.bolt_uri, inst.auth), indent=2))
    except runtime.RuntimeErrorWithHint as exc:
        return runtime.main_error(exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Command line for the local Neo4j + GDS runtime.

    python -m neo4j_runtime fetch               # resolve jars into the user cache (once)
    python -m neo4j_runtime start [--foreground] # start the dev instance, wait until ready
    python -m neo4j_runtime stop | status | smoke

The dev instance keeps its data in ``.mnemograph/neo4j`` of the checkout (override with
MNEMOGRAPH_NEO4J_DIR) and listens on 127.0.0.1:7687 (MNEMOGRAPH_NEO4J_PORT).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

from neo4j_runtime import runtime
from neo4j_runtime.settings import GDS_VERSION, NEO4J_VERSION, InstanceConfig


def dev_instance() -> InstanceConfig:
    base = os.environ.get("MNEMOGRAPH_NEO4J_DIR") or str(Path.cwd() / ".mnemograph" / "neo4j")
    port = int(os.environ.get("MNEMOGRAPH_NEO4J_PORT", "7687"))
    return InstanceConfig(name="dev", base_dir=Path(base).resolve(), bolt_port=port)


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
            info = runtime.smoke(inst.bolt_uri)
            how = "already running" if started.reused else f"started in {started.seconds:.1f}s"
            print(
                f"Neo4j {info['neo4j_version']} + GDS {info['gds_version']} {how}: "
                f"{inst.bolt_uri} (pid {started.pid}, data {inst.data_dir})"
            )
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
            print(json.dumps(runtime.smoke(inst.bolt_uri), indent=2))
    except runtime.RuntimeErrorWithHint as exc:
        return runtime.main_error(exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())

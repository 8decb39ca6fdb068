"""``mnemograph mcp --print-config``: the Claude Desktop / Cursor entry that starts this
server, with absolute paths (a desktop client has neither the venv on PATH nor a working
directory of ours)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from app.mcp.local import default_neo4j_dir

#: Settings worth carrying into the client's environment when they are set here.
PASSED_ON = ("MNEMOGRAPH_URL", "MNEMOGRAPH_NEO4J_URI", "MNEMOGRAPH_NEO4J_PORT",
             "MNEMOGRAPH_NEO4J_HTTP_PORT", "MNEMOGRAPH_RUNTIME_CACHE")  # fmt: skip


def command() -> list[str]:
    """This interpreter's ``mnemograph`` script, or ``python -m app`` if there is none."""
    script = Path(sys.executable).parent / "mnemograph"
    if script.exists():
        return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "app"]


def entry(space: str | None, api_key: str | None = None) -> dict[str, Any]:
    first, *rest = command()
    env = {"MNEMOGRAPH_NEO4J_DIR": os.environ.get("MNEMOGRAPH_NEO4J_DIR")
           or str(default_neo4j_dir())}  # fmt: skip
    env.update({name: os.environ[name] for name in PASSED_ON if os.environ.get(name)})
    if api_key:
        env["MNEMOGRAPH_API_KEY"] = api_key
    args = [*rest, "mcp", *(["--space", space] if space else [])]
    return {"command": first, "args": args, "env": env}


def snippet(space: str | None, api_key: str | None = None) -> str:
    """The ``mcpServers`` JSON both Claude Desktop (claude_desktop_config.json) and Cursor
    (.cursor/mcp.json) read."""
    return json.dumps({"mcpServers": {"mnemograph": entry(space, api_key)}}, indent=2)

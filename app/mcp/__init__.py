"""Mnemograph as an MCP server (the official ``mcp`` SDK): the same tools over stdio (for
desktop agents: ``mnemograph mcp`` reuses a running API through the SDK, or runs the engine
in its own process) and over streamable HTTP mounted on the API at ``/mcp`` (in-process,
behind the API keys and their space limits)."""

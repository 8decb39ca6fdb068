"""Mnemograph as an MCP server (the official ``mcp`` SDK): the same tools over stdio (for
desktop agents, talking to a running server through the SDK) and over streamable HTTP
mounted on the API at ``/mcp`` (in-process, behind the API keys and their space limits)."""

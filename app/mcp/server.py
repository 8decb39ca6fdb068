"""The MCP server the tools are registered on: every tool answer is one compact JSON text
block, every refusal (bad arguments included) the JSON error shape of :mod:`app.mcp.errors`,
and each call is reported to ``on_call`` (the HTTP transport labels its metrics with it)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent
from pydantic import ValidationError

from app.mcp.errors import ToolFailure, from_validation
from app.mcp.results import as_text

log = logging.getLogger("mnemograph.mcp")

#: Told which tool a call names (a registered one, or ``None`` for an unknown name).
OnCall = Callable[[Context[Any, Any], str | None], None]


def text_result(value: Any, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=as_text(value))],
                          is_error=is_error)  # fmt: skip


class Server(MCPServer):
    def __init__(self, *args: Any, on_call: OnCall | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_call = on_call

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        known = self._tool_manager.get_tool(name) is not None
        if context is not None and self.on_call is not None:
            self.on_call(context, name if known else None)
        if not known:
            return text_result(ToolFailure("not_found", f"no tool {name!r}", "name").body, True)
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:  # a crash: logged here, never shown to the model
            log.error("tool %r failed", name, exc_info=exc.__cause__ or exc)
            message = "an unexpected error occurred; it has been logged"
            return text_result(ToolFailure("internal_error", message).body, True)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ToolFailure):
                return text_result(cause.body, True)
            if isinstance(cause, ValidationError):
                return text_result(from_validation(cause).body, True)
            raise

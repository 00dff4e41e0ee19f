"""``define_tool``: a host tool from a name, a description, a schema and a function.

The function receives ``(args, ctx)`` and may be sync or async; it may return a
:class:`ToolResult` (passed through, so it can suspend with ``pending(...)``) or a string.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .types import Tool, ToolContext, ToolResult

DEFAULT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def as_tool_result(value: Any) -> ToolResult:
    """Normalize what a tool function returned into a ToolResult."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult(output=value)
    return ToolResult(output="" if value is None else str(value))


def define_tool(
    name: str,
    description: str,
    input_schema: dict[str, Any] | None = None,
    execute: Callable[[dict[str, Any], ToolContext], Any] | None = None,
) -> Tool:
    """A native Tool; without ``execute`` the tool answers with an empty result."""

    async def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if execute is None:
            return ToolResult(output="")
        value = execute(args, ctx)
        if inspect.isawaitable(value):
            value = await value
        return as_tool_result(value)

    schema = dict(DEFAULT_SCHEMA) if input_schema is None else input_schema
    return Tool(name=name, description=description, input_schema=schema, execute=run, source="native")

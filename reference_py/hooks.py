"""Lifecycle hooks (before_llm, after_llm, before_tool, after_tool): lookup on an object or
a mapping, sync or async calls, and validation of what a hook returns.

A hook that returns something the loop cannot use is a one-line ToolnexusError.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from .errors import ToolnexusError
from .types import ToolResult

HOOK_NAMES = ("before_llm", "after_llm", "before_tool", "after_tool")


async def maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class Hooks:
    """The caller's hooks; every method is a no-op returning None when the hook is absent."""

    def __init__(self, source: Any = None) -> None:
        self._source = source

    def _hook(self, name: str) -> Any:
        if self._source is None:
            return None
        if isinstance(self._source, Mapping):
            return self._source.get(name)
        return getattr(self._source, name, None)

    async def _call(self, name: str, event: dict[str, Any]) -> Any:
        hook = self._hook(name)
        if hook is None:
            return None
        returned = await maybe_await(hook(event))
        if returned is not None and not isinstance(returned, Mapping):
            raise ToolnexusError(f"{name} hook returned {type(returned).__name__}, expected a dict or None")
        return returned

    async def before_llm(self, event: dict[str, Any]) -> Mapping[str, Any] | None:
        return await self._call("before_llm", event)

    async def after_llm(self, event: dict[str, Any]) -> None:
        await self._call("after_llm", event)

    async def before_tool(self, event: dict[str, Any]) -> Mapping[str, Any] | None:
        override = await self._call("before_tool", event)
        if override is None:
            return None
        if "result" in override and not isinstance(override["result"], ToolResult):
            raise ToolnexusError("before_tool hook returned a 'result' that is not a ToolResult")
        if "args" in override and not isinstance(override["args"], Mapping):
            raise ToolnexusError("before_tool hook returned 'args' that is not a dict")
        return override

    async def after_tool(self, event: dict[str, Any]) -> ToolResult | None:
        override = await self._call("after_tool", event)
        if override is None or "result" not in override:
            return None
        if not isinstance(override["result"], ToolResult):
            raise ToolnexusError("after_tool hook returned a 'result' that is not a ToolResult")
        return override["result"]

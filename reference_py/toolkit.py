"""Toolkit assembly: builtins (when switched on) then extra tools, the relay collision
guard, name de-duplication, and runtime registration (``Toolkit.register``).

Order is insertion order; an extra tool with a builtin's name replaces that builtin (the
builtin is dropped); otherwise the first tool of a name wins. The collision guard runs on
the aggregated list before de-duplication and regardless of the builtins toggle, so a
declaration-only relay tool can never be captured by a builtin of the same name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .adapters import to_anthropic, to_gemini, to_openai
from .builtins import BUILTIN_NAMES, create_builtin_tools
from .errors import ToolkitError
from .types import Tool


@dataclass
class Toolkit:
    """The tools a run may declare and execute."""

    tools: list[Tool] = field(default_factory=list)

    def get(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def register(self, *tools: Tool) -> Toolkit:
        """Add tools at runtime, after the ones the toolkit was built with, as every port's
        ``register`` does: a name already present is kept (first wins, so a registered tool
        never shadows a builtin). The relay collision guard holds here too: a relay tool
        named like a builtin is refused whether builtins are on or off, and then nothing is
        added. Returns the toolkit for chaining."""
        for index, tool in enumerate(tools):
            if not isinstance(tool, Tool):
                raise ToolkitError(f"register: tools[{index}] is not a Tool (got {type(tool).__name__})")
        check_relay_collisions(tools)
        for tool in tools:
            if self.get(tool.name) is None:
                self.tools.append(tool)
        return self

    def to_openai(self) -> list[dict[str, Any]]:
        return to_openai(self.tools)

    def to_anthropic(self) -> list[dict[str, Any]]:
        return to_anthropic(self.tools)

    def to_gemini(self) -> list[dict[str, Any]]:
        return to_gemini(self.tools)


def check_relay_collisions(tools: Iterable[Tool]) -> None:
    """Refuse relay tools named like a builtin (the ADR 0010 guard)."""
    colliding = sorted({t.name for t in tools if t.source == "relay" and t.name in BUILTIN_NAMES})
    if colliding:
        raise ToolkitError(
            "relay tool name collides with a built-in tool: "
            f"[{' '.join(colliding)}] — rename the relay tool "
            "(the guard applies even with builtins disabled)"
        )


async def create_toolkit(*, builtins: bool = False, extra_tools: Iterable[Tool] = ()) -> Toolkit:
    """Build a Toolkit; a relay/builtin name collision raises ToolkitError."""
    extras = list(extra_tools)
    for index, tool in enumerate(extras):
        if not isinstance(tool, Tool):
            raise ToolkitError(f"extra_tools[{index}] is not a Tool (got {type(tool).__name__})")
    base = create_builtin_tools() if builtins else []
    check_relay_collisions([*base, *extras])
    shadowed = {t.name for t in extras}
    seen: set[str] = set()
    tools: list[Tool] = []
    for tool in [*(b for b in base if b.name not in shadowed), *extras]:
        if tool.name not in seen:
            seen.add(tool.name)
            tools.append(tool)
    return Toolkit(tools=tools)

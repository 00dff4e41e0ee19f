"""Tool declarations in each provider's native shape (OpenAI, Anthropic, Gemini).

Each adapter accepts a Toolkit or any iterable of Tools and keeps their order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from .types import Tool


class _HasTools(Protocol):
    tools: list[Tool]


def _tools(source: Iterable[Tool] | _HasTools) -> list[Tool]:
    return list(source.tools) if hasattr(source, "tools") else list(source)


def to_openai(source: Iterable[Tool] | _HasTools) -> list[dict[str, Any]]:
    """``[{"type":"function","function":{name, description, parameters}}]``."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in _tools(source)
    ]


def to_anthropic(source: Iterable[Tool] | _HasTools) -> list[dict[str, Any]]:
    """``[{name, description, input_schema}]``."""
    return [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in _tools(source)
    ]


def to_gemini(source: Iterable[Tool] | _HasTools) -> list[dict[str, Any]]:
    """``[{"functionDeclarations":[{name, description, parameters}]}]`` (``[]`` when empty)."""
    declarations = [
        {"name": t.name, "description": t.description, "parameters": t.input_schema}
        for t in _tools(source)
    ]
    return [{"functionDeclarations": declarations}] if declarations else []

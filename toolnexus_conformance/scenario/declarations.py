"""Tool declarations on the wire: a declaration's tool name by style, and the declaration
the reference writes for a toolkit tool.

OpenAI wraps a tool as ``{type: function, function: {name, description, parameters}}``;
Anthropic writes ``{name, description, input_schema}``. Every reader of a declared tool's
name goes through :func:`declared_name`, so the two shapes are told apart in one place.
"""

from __future__ import annotations

from typing import Any

BUILTIN_NAMES = frozenset(
    {"bash", "read", "write", "edit", "grep", "glob", "webfetch", "question", "apply_patch", "todowrite"}
)


def declared_name(declaration: Any, style: str | None = None) -> str | None:
    """The tool name a declaration declares; ``style=None`` tells the shape by its keys
    (an OpenAI declaration has a ``function`` object). None when it names no tool."""
    if not isinstance(declaration, dict):
        return None
    if style is None:
        style = "openai" if isinstance(declaration.get("function"), dict) else "anthropic"
    if style == "openai":
        function = declaration.get("function")
        name = function.get("name") if isinstance(function, dict) else None
    else:
        name = declaration.get("name")
    return name if isinstance(name, str) else None


def declared_description(declaration: Any, style: str) -> Any:
    if not isinstance(declaration, dict):
        return None
    if style == "openai":
        return (declaration.get("function") or {}).get("description")
    return declaration.get("description")


def declaration(tool: dict[str, Any], style: str) -> dict[str, Any]:
    """The declaration the reference writes for a toolkit tool in ``style``."""
    schema = tool.get("schema")
    if style == "openai":
        fn: dict[str, Any] = {"name": tool["name"], "description": tool.get("description", "")}
        if schema is not None:
            fn["parameters"] = schema
        return {"type": "function", "function": fn}
    decl = {"name": tool["name"], "description": tool.get("description", "")}
    if schema is not None:
        decl["input_schema"] = schema
    return decl

"""The ten builtin tools, declared with their real names and input schemas.

The reference declares them so toolkit assembly, the adapters and the relay collision
guard are real; it does not execute them (that is out of scope for a wire oracle), except
``question``, which is a §10 use (upstream §4A): it suspends with ``kind:"question"``, the
questions in ``data.questions`` and a rendered prompt, and on the retry returns the JSON of
``answer.data``.
"""

from __future__ import annotations

import json
from typing import Any

from .types import Tool, ToolContext, ToolResult, pending


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


_STR = {"type": "string"}
_INT = {"type": "integer"}

_DECLARATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "bash": (
        "Run a shell command and return its output.",
        _object({"command": _STR, "timeout": _INT, "description": _STR}, ["command"]),
    ),
    "read": (
        "Read a file, optionally from a line offset with a line limit.",
        _object({"filePath": _STR, "offset": _INT, "limit": _INT}, ["filePath"]),
    ),
    "write": (
        "Write content to a file, replacing it.",
        _object({"filePath": _STR, "content": _STR}, ["filePath", "content"]),
    ),
    "edit": (
        "Replace an exact string in a file.",
        _object(
            {"filePath": _STR, "oldString": _STR, "newString": _STR, "replaceAll": {"type": "boolean"}},
            ["filePath", "oldString", "newString"],
        ),
    ),
    "grep": (
        "Search file contents with a regular expression.",
        _object({"pattern": _STR, "path": _STR, "include": _STR}, ["pattern"]),
    ),
    "glob": (
        "List files matching a glob pattern.",
        _object({"pattern": _STR, "path": _STR}, ["pattern"]),
    ),
    "webfetch": (
        "Fetch a URL and return its content.",
        _object(
            {"url": _STR, "format": {"type": "string", "enum": ["text", "markdown", "html"]}, "timeout": _INT},
            ["url"],
        ),
    ),
    "question": (
        "Ask the user one or more questions and wait for the answers.",
        _object(
            {
                "questions": {
                    "type": "array",
                    "items": _object(
                        {"question": _STR, "header": _STR, "options": {"type": "array", "items": _STR},
                         "multiple": {"type": "boolean"}},
                        ["question"],
                    ),
                }
            },
            ["questions"],
        ),
    ),
    "apply_patch": (
        "Apply a patch to files in the workspace.",
        _object({"patchText": _STR}, ["patchText"]),
    ),
    "todowrite": (
        "Replace the session's todo list.",
        _object(
            {
                "todos": {
                    "type": "array",
                    "items": _object(
                        {
                            "id": _STR,
                            "content": _STR,
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "cancelled"]},
                            "priority": {"type": "string", "enum": ["high", "medium", "low"]},
                        },
                        ["content", "status"],
                    ),
                }
            },
            ["todos"],
        ),
    ),
}

BUILTIN_NAMES: tuple[str, ...] = tuple(_DECLARATIONS)


def _not_executed(name: str):  # noqa: ANN202 - a Tool.execute closure
    async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(output=f"builtin {name} is not executed by the reference", is_error=True)

    return execute


async def _question(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    questions = args.get("questions")
    questions = questions if isinstance(questions, list) else []
    if ctx.answer is None:
        return pending(kind="question", prompt=render_questions(questions), data={"questions": questions})
    # The resolution is the answer: the JSON of answer.data, compact, in the host's key order.
    return ToolResult(output=json.dumps(ctx.answer.data or {}, separators=(",", ":"), ensure_ascii=False))


def render_questions(questions: list[Any]) -> str:
    """Each question's text in order, `` (options: a, b)`` after one with options, one per line."""
    lines = []
    for item in questions:
        item = item if isinstance(item, dict) else {}
        line = item["question"] if isinstance(item.get("question"), str) else ""
        options = item.get("options")
        if isinstance(options, list) and options:
            line += " (options: " + ", ".join(o if isinstance(o, str) else json.dumps(o) for o in options) + ")"
        lines.append(line)
    return "\n".join(lines)


def create_builtin_tools() -> list[Tool]:
    """Fresh builtin Tool declarations in their canonical order."""
    return [
        Tool(
            name=name,
            description=description,
            input_schema=schema,
            execute=_question if name == "question" else _not_executed(name),
            source="builtin",
        )
        for name, (description, schema) in _DECLARATIONS.items()
    ]

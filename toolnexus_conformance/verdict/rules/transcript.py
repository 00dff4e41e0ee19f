"""A style-neutral reading of transcripts: assistant tool turns and the results after them.

Checks reason about "the calls of a turn" and "the results that answer them" the same way
in both wire styles; this module owns the two mappings (OpenAI ``tool_calls`` + ``role:tool``
messages, Anthropic ``tool_use`` blocks + the next user message's ``tool_result`` blocks).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    arguments: Any  # OpenAI: the raw string; Anthropic: the input object


@dataclass(frozen=True)
class Result:
    call_id: str
    content: Any
    is_error: bool | None  # OpenAI tool messages carry no error flag


@dataclass
class ToolTurn:
    index: int  # position of the assistant message in the transcript
    calls: list[Call]
    results: list[Result] = field(default_factory=list)
    messages_after: int = 0  # how many messages follow the results

    @property
    def call_ids(self) -> list[str]:
        return [c.id for c in self.calls]

    @property
    def result_ids(self) -> list[str]:
        return [r.call_id for r in self.results]


def tool_turns(messages: list[Any], style: str) -> list[ToolTurn]:
    turns: list[ToolTurn] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        calls = _calls(message, style)
        if not calls:
            continue
        turn = ToolTurn(index=i, calls=calls)
        end = _collect_results(messages, i + 1, style, turn)
        turn.messages_after = len(messages) - end
        turns.append(turn)
    return turns


def last_tool_turn(messages: list[Any], style: str) -> ToolTurn | None:
    turns = tool_turns(messages, style)
    return turns[-1] if turns else None


def _calls(message: dict[str, Any], style: str) -> list[Call]:
    if style == "openai":
        return [
            Call(str(c.get("id")), str((c.get("function") or {}).get("name")), (c.get("function") or {}).get("arguments"))
            for c in message.get("tool_calls") or []
            if isinstance(c, dict)
        ]
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [
        Call(str(b.get("id")), str(b.get("name")), b.get("input"))
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


def _collect_results(messages: list[Any], start: int, style: str, turn: ToolTurn) -> int:
    if style == "openai":
        j = start
        while j < len(messages) and isinstance(messages[j], dict) and messages[j].get("role") == "tool":
            turn.results.append(Result(str(messages[j].get("tool_call_id")), messages[j].get("content"), None))
            j += 1
        return j
    if start < len(messages) and isinstance(messages[start], dict) and messages[start].get("role") == "user":
        content = messages[start].get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    turn.results.append(Result(str(block.get("tool_use_id")), block.get("content"), block.get("is_error")))
            if turn.results:
                return start + 1
    return start


def parsed_arguments(call: Call) -> Any:
    if isinstance(call.arguments, str):
        try:
            return json.loads(call.arguments)
        except json.JSONDecodeError:
            return None
    return call.arguments

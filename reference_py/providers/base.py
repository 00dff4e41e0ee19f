"""What every provider style shares: the parsed-turn data types, the Provider protocol the
loop talks to, usage normalization, argument serialization, SSE line parsing, and the few
steps both styles take alike (the opening transcript, the response guard, which
transcript message is an assistant turn).

A provider module owns everything that differs between wire styles (endpoint, headers,
request body, response and stream parsing, the transcript shape of tool results); the
loop never looks inside a provider message itself.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ProviderError
from ..types import Tool

Usage = dict[str, int]
TextSink = Callable[[str], None]


@dataclass(frozen=True)
class Call:
    """One tool call the model made: provider id, tool name, parsed args, JSON string form."""

    id: str
    name: str
    args: dict[str, Any]
    raw_arguments: str


@dataclass
class Turn:
    """One parsed model response: the assistant message for the transcript and what it asks."""

    message: dict[str, Any]
    text: str
    calls: list[Call] = field(default_factory=list)
    usage: Usage = field(default_factory=lambda: usage_of(0, 0))
    wants_tools: bool = False


def usage_of(prompt: int, completion: int, total: int | None = None) -> Usage:
    # A missing or zero total falls back to prompt + completion (as the Python port does).
    return {
        "promptTokens": prompt,
        "completionTokens": completion,
        "totalTokens": total if total else prompt + completion,
    }


def add_usage(into: Usage, more: Usage) -> None:
    for key in ("promptTokens", "completionTokens", "totalTokens"):
        into[key] = into.get(key, 0) + more.get(key, 0)


def int_field(obj: Any, key: str) -> int:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def compact_json(value: Any) -> str:
    """The pinned serialization for arguments that did not arrive as a provider string."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def parse_arguments(raw: str) -> dict[str, Any]:
    """Arguments the tool sees: a JSON object, else ``{}`` (invalid or non-object JSON)."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def opening_transcript(
    history: Sequence[dict[str, Any]], prompt: str | None, system_message: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """A copy of ``history`` (never the caller's objects), then ``system_message`` when the
    history is empty (a style that carries the system prompt in the transcript), then the
    user turn when there is a ``prompt``."""
    messages = copy.deepcopy(list(history))
    if not messages and system_message is not None:
        messages.append(system_message)
    if prompt is not None:
        messages.append({"role": "user", "content": prompt})
    return messages


def response_object(payload: Any) -> dict[str, Any]:
    """A non-streaming response body, checked to be a JSON object."""
    if not isinstance(payload, dict):
        raise ProviderError("LLM response is not a JSON object")
    return payload


def is_assistant(message: Any) -> bool:
    return isinstance(message, dict) and message.get("role") == "assistant"


async def sse_payloads(lines: AsyncIterator[str]) -> AsyncIterator[Any]:
    """Parsed JSON of each ``data:`` line; ``[DONE]`` ends the stream, bad JSON is skipped."""
    async for line in lines:
        line = line.rstrip("\r")
        if not line.startswith("data:"):
            continue
        payload = line[len("data:") :].strip()
        if payload == "[DONE]":
            return
        if not payload:
            continue
        try:
            yield json.loads(payload)
        except ValueError:
            continue


class Provider(Protocol):
    """The loop's view of one wire style."""

    style: str

    def url(self, base_url: str) -> str: ...

    def headers(self, api_key: str) -> dict[str, str]: ...

    def opening(
        self, history: Sequence[dict[str, Any]], system: str, prompt: str | None
    ) -> list[dict[str, Any]]:
        """The transcript a run starts from (history copy, system message, user turn)."""
        ...

    def body(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[Tool],
        system: str,
        stream: bool,
    ) -> dict[str, Any]: ...

    def parse(self, payload: Any) -> Turn: ...

    async def read_stream(self, lines: AsyncIterator[str], on_text: TextSink) -> Turn: ...

    def calls_of(self, message: Any) -> list[Call] | None:
        """The tool calls of an assistant transcript message, None if it is not one."""
        ...

    def recorded_results(self, messages: Sequence[Any]) -> dict[str, dict[str, Any]]:
        """Result entries already in the transcript after a tool turn, keyed by call id."""
        ...

    def entry_content(self, entry: dict[str, Any]) -> Any: ...

    def result_entry(self, call_id: str, output: str, is_error: bool) -> dict[str, Any]: ...

    def result_messages(self, entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The transcript messages that carry a turn's result entries, in order."""
        ...

    def exhausted_text(self, messages: Sequence[Any]) -> str:
        """The final text of a run that ran out of turns."""
        ...

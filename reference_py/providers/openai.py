"""The OpenAI chat-completions wire style: endpoint, body, JSON and SSE parsing, and the
transcript shapes (assistant message verbatim, one ``role:"tool"`` message per result)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from ..adapters import to_openai
from ..errors import ProviderError
from ..types import Tool
from .base import (
    Call,
    TextSink,
    Turn,
    add_usage,
    compact_json,
    int_field,
    is_assistant,
    opening_transcript,
    parse_arguments,
    response_object,
    sse_payloads,
    usage_of,
)


def _usage(raw: Any) -> dict[str, int]:
    return usage_of(
        int_field(raw, "prompt_tokens"),
        int_field(raw, "completion_tokens"),
        int_field(raw, "total_tokens"),
    )


def _call(raw: Any, where: str) -> Call:
    if not isinstance(raw, dict):
        raise ProviderError(f"LLM response {where} is not an object")
    function = raw.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise ProviderError(f"LLM response {where} has no function name")
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        # Some gateways send an object; keep a string form so relay can still echo it.
        arguments = compact_json(arguments if arguments is not None else {})
    raw_id = raw.get("id")
    call_id = raw_id if isinstance(raw_id, str) else ""
    return Call(call_id, function["name"], parse_arguments(arguments), arguments)


class OpenAIProvider:
    """POST {base}/chat/completions with a Bearer key."""

    style = "openai"

    def url(self, base_url: str) -> str:
        return base_url.rstrip("/") + "/chat/completions"

    def headers(self, api_key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}

    def opening(
        self, history: Sequence[dict[str, Any]], system: str, prompt: str | None
    ) -> list[dict[str, Any]]:
        # The system prompt is the transcript's first message, so only a fresh one gets it.
        return opening_transcript(history, prompt, {"role": "system", "content": system} if system else None)

    def body(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[Tool],
        system: str,
        stream: bool,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "messages": messages}
        if tools:
            body["tools"] = to_openai(tools)
            body["tool_choice"] = "auto"
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def parse(self, payload: Any) -> Turn:
        payload = response_object(payload)
        choices = payload.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ProviderError("LLM response has no choices[0]")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise ProviderError("LLM response has no choices[0].message")
        raw_calls = message.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise ProviderError("LLM response tool_calls is not an array")
        calls = [_call(raw, f"tool_calls[{i}]") for i, raw in enumerate(raw_calls)]
        content = message.get("content")
        return Turn(
            message=message,
            text=content if isinstance(content, str) else "",
            calls=calls,
            usage=_usage(payload.get("usage")),
            wants_tools=bool(calls),
        )

    async def read_stream(self, lines: AsyncIterator[str], on_text: TextSink) -> Turn:
        text: list[str] = []
        slots: dict[int, dict[str, str]] = {}
        usage = usage_of(0, 0)
        async for chunk in sse_payloads(lines):
            if not isinstance(chunk, dict):
                continue
            if isinstance(chunk.get("usage"), dict):
                add_usage(usage, _usage(chunk["usage"]))
            choices = chunk.get("choices")
            if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
                continue
            delta = choices[0].get("delta")
            if not isinstance(delta, dict):
                continue
            if isinstance(delta.get("content"), str) and delta["content"]:
                text.append(delta["content"])
                on_text(delta["content"])
            for part in delta.get("tool_calls") or []:
                if not isinstance(part, dict):
                    continue
                raw_index = part.get("index")
                index = raw_index if isinstance(raw_index, int) else 0
                slot = slots.setdefault(index, {"id": "", "name": "", "arguments": ""})
                if isinstance(part.get("id"), str) and part["id"]:
                    slot["id"] = part["id"]
                raw_function = part.get("function")
                function = raw_function if isinstance(raw_function, dict) else {}
                if isinstance(function.get("name"), str):
                    slot["name"] += function["name"]
                if isinstance(function.get("arguments"), str):
                    slot["arguments"] += function["arguments"]
        ordered = [slots[i] for i in sorted(slots)]
        calls = [Call(s["id"], s["name"], parse_arguments(s["arguments"]), s["arguments"]) for s in ordered]
        joined = "".join(text)
        message: dict[str, Any] = {"role": "assistant", "content": joined or None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.raw_arguments},
                }
                for c in calls
            ]
        return Turn(message=message, text=joined, calls=calls, usage=usage, wants_tools=bool(calls))

    def calls_of(self, message: Any) -> list[Call] | None:
        if not is_assistant(message):
            return None
        raw_calls = message.get("tool_calls")
        if not isinstance(raw_calls, list) or not raw_calls:
            return None
        return [_call(raw, f"tool_calls[{i}]") for i, raw in enumerate(raw_calls)]

    def recorded_results(self, messages: Sequence[Any]) -> dict[str, dict[str, Any]]:
        return {
            m["tool_call_id"]: m
            for m in messages
            if isinstance(m, dict) and m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str)
        }

    def entry_content(self, entry: dict[str, Any]) -> Any:
        return entry.get("content")

    def result_entry(self, call_id: str, output: str, is_error: bool) -> dict[str, Any]:
        # The OpenAI shape has no error flag; the model reads the error from the text.
        return {"role": "tool", "tool_call_id": call_id, "content": output}

    def result_messages(self, entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return list(entries)

    def exhausted_text(self, messages: Sequence[Any]) -> str:
        for message in reversed(messages):
            if (
                isinstance(message, dict)
                and message.get("role") == "assistant"
                and isinstance(message.get("content"), str)
            ):
                return message["content"]
        return ""

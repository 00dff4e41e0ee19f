"""The Anthropic messages wire style: endpoint, body (``system`` field, ``max_tokens``), JSON
and SSE parsing, and the transcript shapes (assistant content blocks verbatim, one user
message of ``tool_result`` blocks per turn)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from ..adapters import to_anthropic
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

MAX_TOKENS = 4096
API_VERSION = "2023-06-01"


def _usage(raw: Any) -> dict[str, int]:
    return usage_of(int_field(raw, "input_tokens"), int_field(raw, "output_tokens"))


def _calls(blocks: list[Any]) -> list[Call]:
    calls: list[Call] = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            raw_args, raw_id, raw_name = block.get("input"), block.get("id"), block.get("name")
            args = raw_args if isinstance(raw_args, dict) else {}
            call_id = raw_id if isinstance(raw_id, str) else ""
            name = raw_name if isinstance(raw_name, str) else ""
            calls.append(Call(call_id, name, args, compact_json(args)))
    return calls


def _text(blocks: list[Any]) -> str:
    return "".join(
        b["text"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


class AnthropicProvider:
    """POST {base}/v1/messages (or {base}/messages when base ends in /v1) with x-api-key."""

    style = "anthropic"

    def url(self, base_url: str) -> str:
        base = base_url.rstrip("/")
        return base + "/messages" if base.endswith("/v1") else base + "/v1/messages"

    def headers(self, api_key: str) -> dict[str, str]:
        return {
            "x-api-key": api_key,
            "anthropic-version": API_VERSION,
            "Content-Type": "application/json",
        }

    def opening(
        self, history: Sequence[dict[str, Any]], system: str, prompt: str | None
    ) -> list[dict[str, Any]]:
        # The system prompt travels in the body's own field, never in the transcript.
        return opening_transcript(history, prompt)

    def body(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[Tool],
        system: str,
        stream: bool,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "max_tokens": MAX_TOKENS}
        if system:
            body["system"] = system
        body["messages"] = messages
        if tools:
            body["tools"] = to_anthropic(tools)
        if stream:
            body["stream"] = True
        return body

    def parse(self, payload: Any) -> Turn:
        payload = response_object(payload)
        blocks = payload.get("content")
        if not isinstance(blocks, list):
            raise ProviderError("LLM response has no content array")
        calls = _calls(blocks)
        return Turn(
            message={"role": "assistant", "content": blocks},
            text=_text(blocks),
            calls=calls,
            usage=_usage(payload.get("usage")),
            wants_tools=bool(calls),
        )

    async def read_stream(self, lines: AsyncIterator[str], on_text: TextSink) -> Turn:
        blocks: dict[int, dict[str, Any]] = {}
        partial: dict[int, str] = {}
        usage = usage_of(0, 0)
        stop_reason = None
        async for event in sse_payloads(lines):
            if not isinstance(event, dict):
                continue
            kind = event.get("type")
            raw_index = event.get("index")
            index = raw_index if isinstance(raw_index, int) else 0
            if kind == "message_start" and isinstance(event.get("message"), dict):
                add_usage(usage, _usage(event["message"].get("usage")))
            elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
                blocks[index] = dict(event["content_block"])
            elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
                delta = event["delta"]
                block = blocks.setdefault(index, {"type": "text", "text": ""})
                if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                    block["text"] = block.get("text", "") + delta["text"]
                    on_text(delta["text"])
                elif delta.get("type") == "input_json_delta":
                    piece = delta.get("partial_json")
                    partial[index] = partial.get(index, "") + (piece if isinstance(piece, str) else "")
                # a thinking block starts empty and arrives in these deltas (Messages API streaming)
                elif delta.get("type") == "thinking_delta" and isinstance(delta.get("thinking"), str):
                    block["thinking"] = block.get("thinking", "") + delta["thinking"]
                elif delta.get("type") == "signature_delta" and isinstance(delta.get("signature"), str):
                    block["signature"] = delta["signature"]
            elif kind == "message_delta":
                if isinstance(event.get("delta"), dict):
                    stop_reason = event["delta"].get("stop_reason", stop_reason)
                add_usage(usage, _usage(event.get("usage")))
        ordered: list[dict[str, Any]] = []
        for index in sorted(blocks):
            block = blocks[index]
            if block.get("type") == "tool_use":
                block = {
                    "type": "tool_use",
                    "id": block.get("id", ""),
                    "name": block.get("name", ""),
                    "input": parse_arguments(partial.get(index, "")),
                }
            ordered.append(block)
        calls = _calls(ordered)
        return Turn(
            message={"role": "assistant", "content": ordered},
            text=_text(ordered),
            calls=calls,
            usage=usage,
            wants_tools=bool(calls) and stop_reason == "tool_use",
        )

    def calls_of(self, message: Any) -> list[Call] | None:
        if not is_assistant(message):
            return None
        blocks = message.get("content")
        if not isinstance(blocks, list):
            return None
        return _calls(blocks) or None

    def recorded_results(self, messages: Sequence[Any]) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for message in messages:
            if not isinstance(message, dict) or message.get("role") != "user":
                continue
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "tool_result"
                    and isinstance(block.get("tool_use_id"), str)
                ):
                    found[block["tool_use_id"]] = block
        return found

    def entry_content(self, entry: dict[str, Any]) -> Any:
        return entry.get("content")

    def result_entry(self, call_id: str, output: str, is_error: bool) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": is_error}

    def result_messages(self, entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"role": "user", "content": list(entries)}] if entries else []

    def exhausted_text(self, messages: Sequence[Any]) -> str:
        # The Python port reports no text for an Anthropic run that ran out of turns.
        return ""

"""Anthropic Messages wire format for the fake provider: a scripted turn rendered as a
``message`` JSON body or as the named SSE events of a streamed message, and Anthropic's
error envelope. ``tool_use.input`` is the scripted argument text parsed (key order kept);
a stream sends that same text as ``input_json_delta`` pieces. A turn's
``extra.extraBlocks`` (say a ``thinking`` block) lead the content list, as thinking does on
the real API (streamed as the API streams them: a thinking block empty at its start, then
``thinking_delta`` and ``signature_delta``; other blocks whole at their start);
``extra.extraResponseKeys`` go on the message, ``extra.extraEvents`` are sent right after
``message_start``; ``wire.usage: "absent"`` drops every usage object (a gateway shape:
wire.py)."""

from __future__ import annotations

from typing import Any

from toolnexus_conformance.helpers.json_copy import copy_json

from .script import ScriptedTurn
from .sse import halves, named_event

STYLE = "anthropic"
ENDPOINT = "/messages"
REQUEST_ID_HEADER = "request-id"


def stop_reason(turn: ScriptedTurn) -> str:
    if turn.stop_reason is not None:
        return turn.stop_reason
    return "tool_use" if turn.tool_calls else "end_turn"


def content_blocks(turn: ScriptedTurn) -> list[dict[str, Any]]:
    """Scripted extra blocks, then text (omitted when a tool-call turn has none), then one
    tool_use per call."""
    blocks: list[dict[str, Any]] = [copy_json(dict(b)) for b in turn.extra.blocks]
    if turn.text or not turn.tool_calls:
        blocks.append({"type": "text", "text": turn.text or ""})
    for call in turn.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.parsed_arguments()}
        )
    return blocks


def message(turn: ScriptedTurn, model: str, message_id: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content_blocks(turn),
        "stop_reason": stop_reason(turn),
        "stop_sequence": None,
    }
    if turn.wire.usage != "absent":
        out["usage"] = {"input_tokens": turn.usage.input, "output_tokens": turn.usage.output}
    out.update(copy_json(dict(turn.extra.response_keys)))
    return out


def message_events(turn: ScriptedTurn, model: str, message_id: str) -> tuple[bytes, ...]:
    """The stream. Ports add up the usage of message_start and of every message_delta, so
    input tokens go only in message_start and output tokens only in message_delta."""
    start: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
    }
    with_usage = turn.wire.usage != "absent"
    if with_usage:
        start["usage"] = {"input_tokens": turn.usage.input, "output_tokens": 0}
    start.update(copy_json(dict(turn.extra.response_keys)))
    events: list[bytes] = [named_event("message_start", {"type": "message_start", "message": start})]
    events.extend(named_event(str(e.get("type", "unknown")), dict(e)) for e in turn.extra.events)
    # real streams carry pings; a port must skip them
    events.append(named_event("ping", {"type": "ping"}))
    index = 0
    for block in turn.extra.blocks:
        events.extend(_block_events(index, *_extra_block_stream(copy_json(dict(block)))))
        index += 1
    if turn.text or not turn.tool_calls:
        text_deltas = [
            {"type": "text_delta", "text": piece} for piece in halves(turn.text or "") if piece
        ]
        events.extend(_block_events(index, {"type": "text", "text": ""}, text_deltas))
        index += 1
    for call in turn.tool_calls:
        opening = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        json_deltas = [
            {"type": "input_json_delta", "partial_json": piece} for piece in halves(call.arguments)
        ]
        events.extend(_block_events(index, opening, json_deltas))
        index += 1
    delta: dict[str, Any] = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason(turn), "stop_sequence": None},
    }
    if with_usage:
        delta["usage"] = {"output_tokens": turn.usage.output}
    events.append(named_event("message_delta", delta))
    events.append(named_event("message_stop", {"type": "message_stop"}))
    return tuple(events)


def _extra_block_stream(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """How the Messages API streams a block beyond text and tool_use: a ``thinking`` block
    starts with empty ``thinking`` and ``signature`` and arrives as ``thinking_delta`` pieces
    and one ``signature_delta`` (the API reference's "Streaming Messages", and the only
    delta types anthropic's ``RawContentBlockDelta`` has for it). Every other block type
    (``redacted_thinking``, which has no delta type, and blocks a port does not know) comes
    whole in its ``content_block_start``."""
    if block.get("type") != "thinking":
        return block, []
    thinking, signature = block.get("thinking"), block.get("signature")
    opening = dict(block, thinking="", signature="")
    deltas: list[dict[str, Any]] = []
    if isinstance(thinking, str):
        deltas.extend({"type": "thinking_delta", "thinking": piece} for piece in halves(thinking) if piece)
    if isinstance(signature, str):
        deltas.append({"type": "signature_delta", "signature": signature})
    return opening, deltas


def _block_events(
    index: int, opening: dict[str, Any], deltas: list[dict[str, Any]]
) -> list[bytes]:
    events = [
        named_event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
    ]
    events.extend(
        named_event(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}
        )
        for d in deltas
    )
    events.append(
        named_event("content_block_stop", {"type": "content_block_stop", "index": index})
    )
    return events


def error_envelope(
    message: str, error_type: str = "invalid_request_error", request_id: str = "req_fake"
) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id,
    }

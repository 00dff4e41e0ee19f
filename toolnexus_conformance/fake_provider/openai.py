"""OpenAI Chat Completions wire format for the fake provider: a scripted turn rendered as
a ``chat.completion`` JSON body or as ``chat.completion.chunk`` SSE events, and OpenAI's
error envelope. Tool-call ``arguments`` are sent exactly as scripted (raw text). A turn's
``extra`` keys go on the JSON message and response, or on the stream's first delta and on
every chunk; its ``wire`` shapes content, usage and the tool-call deltas (wire.py)."""

from __future__ import annotations

from typing import Any

from toolnexus_conformance.helpers.json_copy import copy_json

from .script import ScriptedTurn
from .sse import data_event, halves

STYLE = "openai"
ENDPOINT = "/chat/completions"
REQUEST_ID_HEADER = "x-request-id"
# A fixed creation time keeps responses byte-stable across runs.
CREATED = 1_700_000_000


def finish_reason(turn: ScriptedTurn) -> str:
    if turn.stop_reason is not None:
        return turn.stop_reason
    return "tool_calls" if turn.tool_calls else "stop"


_NO_TEXT_CONTENT: dict[str, Any] = {"null": None, "empty": ""}


def message(turn: ScriptedTurn) -> dict[str, Any]:
    """The assistant message; content is null for a tool-call turn without text, "" for a
    final one, unless ``wire.content`` says otherwise."""
    out: dict[str, Any] = {"role": "assistant"}
    if turn.text:
        out["content"] = turn.text
    elif turn.wire.content is None:
        out["content"] = None if turn.tool_calls else ""
    elif turn.wire.content != "absent":
        out["content"] = _NO_TEXT_CONTENT[turn.wire.content]
    if turn.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in turn.tool_calls
        ]
    for key, value in turn.extra.message_keys:
        out[key] = copy_json(value)
    return out


def usage(turn: ScriptedTurn) -> dict[str, int] | None:
    """The usage object, None when the turn sends none (``wire.usage``)."""
    if turn.wire.usage == "absent":
        return None
    out = {"prompt_tokens": turn.usage.input, "completion_tokens": turn.usage.output}
    if turn.wire.usage == "zero-total":
        out["total_tokens"] = 0
    elif turn.wire.usage != "no-total":
        out["total_tokens"] = turn.usage.input + turn.usage.output
    return out


def completion(turn: ScriptedTurn, model: str, response_id: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": response_id,
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [
            {"index": 0, "message": message(turn), "finish_reason": finish_reason(turn)}
        ],
    }
    if usage(turn) is not None:
        out["usage"] = usage(turn)
    out.update(copy_json(dict(turn.extra.response_keys)))
    return out


def completion_events(
    turn: ScriptedTurn, model: str, response_id: str, include_usage: bool
) -> tuple[bytes, ...]:
    """The stream: role chunk, any extra events, content deltas, per call one chunk with
    index/id/name and two argument pieces (in ``wire.toolCallOrder``), the finish chunk, the
    usage chunk (only when the request asked for it, as the real API does, and the turn
    has usage) and ``[DONE]``."""

    # one copy for every chunk: each is serialized at once and never changed
    response_keys = copy_json(dict(turn.extra.response_keys))

    def envelope(**fields: Any) -> dict[str, Any]:
        out = {"id": response_id, "object": "chat.completion.chunk", "created": CREATED, "model": model}
        out.update(fields)
        out.update(response_keys)
        return out

    def chunk(delta: dict[str, Any], reason: str | None = None) -> bytes:
        return data_event(envelope(choices=[{"index": 0, "delta": delta, "finish_reason": reason}]))

    # the role chunk carries no content key by default: an empty "" would be a text delta
    # to ports; wire.content puts null or "" there when the turn has no text
    role: dict[str, Any] = {"role": "assistant"}
    if not turn.text and turn.wire.content in _NO_TEXT_CONTENT:
        role["content"] = _NO_TEXT_CONTENT[turn.wire.content]
    for key, value in turn.extra.message_keys:
        role[key] = copy_json(value)
    events: list[bytes] = [chunk(role)]
    events.extend(data_event(dict(extra)) for extra in turn.extra.events)
    if turn.text:
        events.extend(chunk({"content": piece}) for piece in halves(turn.text) if piece)
    events.extend(chunk({"tool_calls": [part]}) for part in _tool_call_parts(turn))
    events.append(chunk({}, finish_reason(turn)))
    if include_usage and usage(turn) is not None:
        events.append(data_event(envelope(choices=[], usage=usage(turn))))
    events.append(b"data: [DONE]\n\n")
    return tuple(events)


def _tool_call_parts(turn: ScriptedTurn) -> list[dict[str, Any]]:
    """The ``tool_calls`` delta entries of a stream, one per chunk, in the scripted order."""
    indexes = turn.wire.tool_call_indexes or tuple(range(len(turn.tool_calls)))
    per_call: list[list[dict[str, Any]]] = []
    for index, call in zip(indexes, turn.tool_calls, strict=True):
        opening: dict[str, Any] = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        pieces = [{"index": index, "function": {"arguments": piece}} for piece in halves(call.arguments)]
        parts = [opening, *pieces]
        if turn.wire.omit_tool_call_index:
            for part in parts:
                del part["index"]
        per_call.append(parts)
    if turn.wire.tool_call_order == "reversed":
        per_call.reverse()
    if turn.wire.tool_call_order == "interleaved":
        # every call has the same number of parts (opening + two halves)
        return [parts[i] for i in range(3) for parts in per_call]
    return [part for parts in per_call for part in parts]


def wants_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def error_envelope(
    message: str,
    error_type: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}

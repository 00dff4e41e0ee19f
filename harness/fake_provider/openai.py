"""OpenAI Chat Completions wire format for the fake provider: a scripted turn rendered as
a ``chat.completion`` JSON body or as ``chat.completion.chunk`` SSE events, and OpenAI's
error envelope. Tool-call ``arguments`` are sent exactly as scripted (raw text). A turn's
``extra.extraMessageKeys`` are added to the JSON message only; the stream has no place
for them and ignores them."""

from __future__ import annotations

import copy
from typing import Any

from .script import ScriptedTurn
from .sse import data_event, halves

STYLE = "openai"
ENDPOINT = "/chat/completions"
# A fixed creation time keeps responses byte-stable across runs.
CREATED = 1_700_000_000


def finish_reason(turn: ScriptedTurn) -> str:
    if turn.stop_reason is not None:
        return turn.stop_reason
    return "tool_calls" if turn.tool_calls else "stop"


def message(turn: ScriptedTurn) -> dict[str, Any]:
    """The assistant message; content is null for a tool-call turn without text."""
    content: str | None
    if turn.tool_calls and not turn.text:
        content = None
    else:
        content = turn.text or ""
    out: dict[str, Any] = {"role": "assistant", "content": content}
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
        out[key] = copy.deepcopy(value)
    return out


def usage(turn: ScriptedTurn) -> dict[str, int]:
    return {
        "prompt_tokens": turn.usage.input,
        "completion_tokens": turn.usage.output,
        "total_tokens": turn.usage.input + turn.usage.output,
    }


def completion(turn: ScriptedTurn, model: str, response_id: str) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [
            {"index": 0, "message": message(turn), "finish_reason": finish_reason(turn)}
        ],
        "usage": usage(turn),
    }


def completion_events(
    turn: ScriptedTurn, model: str, response_id: str, include_usage: bool
) -> tuple[bytes, ...]:
    """The stream: role chunk, content deltas, per call one chunk with index/id/name and
    two argument pieces, the finish chunk, the usage chunk (only when the request asked
    for it, as the real API does) and ``[DONE]``."""

    def chunk(delta: dict[str, Any], reason: str | None = None) -> bytes:
        return data_event(
            {
                "id": response_id,
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
            }
        )

    # the role chunk carries no content key: an empty "" would be a text delta to ports
    events: list[bytes] = [chunk({"role": "assistant"})]
    if turn.text:
        events.extend(chunk({"content": piece}) for piece in halves(turn.text) if piece)
    for index, call in enumerate(turn.tool_calls):
        opening = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        events.append(chunk({"tool_calls": [opening]}))
        for piece in halves(call.arguments):
            events.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    events.append(chunk({}, finish_reason(turn)))
    if include_usage:
        events.append(
            data_event(
                {
                    "id": response_id,
                    "object": "chat.completion.chunk",
                    "created": CREATED,
                    "model": model,
                    "choices": [],
                    "usage": usage(turn),
                }
            )
        )
    events.append(b"data: [DONE]\n\n")
    return tuple(events)


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

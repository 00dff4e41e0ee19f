"""Scripted fake provider for the reference's own tests.

Owns: turning the neutral one-turn script (``{"text", "toolCalls", "usage"}``, see the team
brief) into provider responses in the four wire forms (OpenAI JSON / SSE, Anthropic JSON /
SSE), a respx-backed provider that replays a list of turns and records request bodies, the
expected transcript fragments written by hand from the contract, and a pairing checker that
says whether a request body would be accepted by the real providers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import respx

BASE_URL = "http://llm.test/v1"
MODEL = "m-test"
API_KEY = "k-test"
STYLES = ("openai", "anthropic")

# Unsorted keys and extra whitespace: a re-serialized string is told apart from the raw one.
ARGS_BA = '{ "b": 2,  "a": 1 }'
ARGS_BA_COMPACT = '{"b":2,"a":1}'
INPUT_BA = {"b": 2, "a": 1}
AB_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
}


def relay_prompt(name: str) -> str:
    return f"relay tool call {name} to the caller for execution"


def turn(text: str | None = None, calls: list[tuple[str, str, str]] | None = None,
         usage: tuple[int, int] = (3, 5)) -> dict[str, Any]:
    """One neutral scripted model turn; ``calls`` are ``(id, name, raw arguments)``."""
    script: dict[str, Any] = {"usage": {"input": usage[0], "output": usage[1]}}
    if text is not None:
        script["text"] = text
    if calls:
        script["toolCalls"] = [{"id": i, "name": n, "arguments": a} for i, n, a in calls]
    return script


def final(text: str = "all done", usage: tuple[int, int] = (3, 5)) -> dict[str, Any]:
    return turn(text=text, usage=usage)


# ---------------------------------------------------------------- provider response builders


def openai_message(script: dict[str, Any]) -> dict[str, Any]:
    """The assistant message exactly as the provider sends it (and as the transcript keeps it)."""
    message: dict[str, Any] = {"role": "assistant", "content": script.get("text")}
    calls = script.get("toolCalls") or []
    if calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls
        ]
    return message


def _openai_usage(script: dict[str, Any]) -> dict[str, int]:
    u = script.get("usage", {"input": 0, "output": 0})
    return {"prompt_tokens": u["input"], "completion_tokens": u["output"],
            "total_tokens": u["input"] + u["output"]}


def openai_json(script: dict[str, Any]) -> dict[str, Any]:
    calls = script.get("toolCalls") or []
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "model": MODEL,
        "choices": [{"index": 0, "message": openai_message(script),
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": _openai_usage(script),
    }


def _halves(text: str) -> list[str]:
    cut = max(1, len(text) // 2)
    return [p for p in (text[:cut], text[cut:]) if p]


def _sse(events: list[dict[str, Any] | str], named: bool = False) -> bytes:
    lines: list[str] = []
    for event in events:
        if isinstance(event, str):
            lines.append(f"data: {event}\n\n")
            continue
        if named:
            lines.append(f"event: {event['type']}\n")
        lines.append(f"data: {json.dumps(event)}\n\n")
    return "".join(lines).encode()


def openai_sse(script: dict[str, Any]) -> bytes:
    """Text in two deltas; each call's arguments in two appended pieces; a usage chunk."""
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events: list[dict[str, Any] | str] = [chunk({"role": "assistant", "content": ""})]
    for piece in _halves(script.get("text") or ""):
        events.append(chunk({"content": piece}))
    calls = script.get("toolCalls") or []
    for index, call in enumerate(calls):
        pieces = _halves(call["arguments"]) or [""]
        events.append(chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                             "function": {"name": call["name"],
                                                          "arguments": pieces[0]}}]}))
        for piece in pieces[1:]:
            events.append(chunk({"tool_calls": [{"index": index,
                                                 "function": {"arguments": piece}}]}))
    events.append(chunk({}, "tool_calls" if calls else "stop"))
    events.append({"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": MODEL,
                   "choices": [], "usage": _openai_usage(script)})
    events.append("[DONE]")
    return _sse(events)


def anthropic_blocks(script: dict[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if script.get("text"):
        blocks.append({"type": "text", "text": script["text"]})
    for call in script.get("toolCalls") or []:
        blocks.append({"type": "tool_use", "id": call["id"], "name": call["name"],
                       "input": json.loads(call["arguments"])})
    return blocks


def anthropic_json(script: dict[str, Any]) -> dict[str, Any]:
    u = script.get("usage", {"input": 0, "output": 0})
    return {
        "id": "msg_test", "type": "message", "role": "assistant", "model": MODEL,
        "content": anthropic_blocks(script),
        "stop_reason": "tool_use" if script.get("toolCalls") else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": u["input"], "output_tokens": u["output"]},
    }


def anthropic_sse(script: dict[str, Any]) -> bytes:
    """message_start carries input tokens, message_delta output tokens (the loop sums both)."""
    u = script.get("usage", {"input": 0, "output": 0})
    events: list[dict[str, Any] | str] = [{
        "type": "message_start",
        "message": {"id": "msg_test", "type": "message", "role": "assistant", "model": MODEL,
                    "content": [], "stop_reason": None,
                    "usage": {"input_tokens": u["input"], "output_tokens": 0}},
    }]
    index = 0
    if script.get("text"):
        events.append({"type": "content_block_start", "index": index,
                       "content_block": {"type": "text", "text": ""}})
        for piece in _halves(script["text"]):
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": piece}})
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    for call in script.get("toolCalls") or []:
        events.append({"type": "content_block_start", "index": index,
                       "content_block": {"type": "tool_use", "id": call["id"],
                                         "name": call["name"], "input": {}}})
        for piece in _halves(call["arguments"]):
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": piece}})
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    events.append({"type": "message_delta",
                   "delta": {"stop_reason": "tool_use" if script.get("toolCalls") else "end_turn",
                             "stop_sequence": None},
                   "usage": {"output_tokens": u["output"]}})
    events.append({"type": "message_stop"})
    return _sse(events, named=True)


# ---------------------------------------------------------------- the fake provider


@dataclass
class FakeProvider:
    """Replays scripted turns in order; a request past the script gets a 500."""

    style: str
    turns: list[dict[str, Any]]
    route: Any = None
    served: int = 0
    requests: list[httpx.Request] = field(default_factory=list)

    def respond(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.served >= len(self.turns):
            return httpx.Response(500, json={"error": "script exhausted"})
        script = self.turns[self.served]
        self.served += 1
        streaming = json.loads(request.content).get("stream") is True
        if streaming:
            body = openai_sse(script) if self.style == "openai" else anthropic_sse(script)
            return httpx.Response(200, content=body,
                                  headers={"content-type": "text/event-stream"})
        body_json = openai_json(script) if self.style == "openai" else anthropic_json(script)
        return httpx.Response(200, json=body_json)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(call.request.content) for call in self.route.calls]

    @property
    def call_count(self) -> int:
        return len(self.route.calls)


def endpoint_path(style: str) -> str:
    return "/chat/completions" if style == "openai" else "/messages"


@contextmanager
def fake_provider(style: str, turns: list[dict[str, Any]],
                  base_url: str = BASE_URL) -> Iterator[FakeProvider]:
    provider = FakeProvider(style, list(turns))
    path = endpoint_path(style) if base_url.endswith("/v1") else "/v1/messages"
    with respx.mock(base_url=base_url, assert_all_called=False) as mock:
        provider.route = mock.post(path).mock(side_effect=provider.respond)
        yield provider


# ---------------------------------------------------------------- expected transcript pieces


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(style: str, script: dict[str, Any]) -> dict[str, Any]:
    if style == "openai":
        return openai_message(script)
    return {"role": "assistant", "content": anthropic_blocks(script)}


def results(style: str, pairs: list[tuple[str, str, bool]]) -> list[dict[str, Any]]:
    """Transcript messages answering a turn: ``(call id, content, is_error)`` in call order."""
    if not pairs:
        return []
    if style == "openai":
        return [{"role": "tool", "tool_call_id": i, "content": c} for i, c, _ in pairs]
    return [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": i, "content": c, "is_error": e}
        for i, c, e in pairs]}]


def relay_entry(style: str, call_id: str, name: str, raw: str) -> dict[str, Any]:
    """A data.calls entry: openai keeps the raw string, anthropic the compact serialization."""
    parsed = json.loads(raw)
    arguments = raw if style == "openai" else json.dumps(parsed, separators=(",", ":"),
                                                         ensure_ascii=False)
    return {"id": call_id, "name": name, "input": parsed, "arguments": arguments}


def relay_request(style: str, request_id: str,
                  calls: list[tuple[str, str, str]]) -> dict[str, Any]:
    """The relay Request wire for ``calls`` = ``(id, name, raw arguments)`` in call order."""
    return {"id": request_id, "kind": "tool_call", "prompt": relay_prompt(calls[0][1]),
            "data": {"calls": [relay_entry(style, *c) for c in calls]}}


def declaration(style: str, name: str, description: str,
                schema: dict[str, Any]) -> dict[str, Any]:
    if style == "openai":
        return {"type": "function",
                "function": {"name": name, "description": description, "parameters": schema}}
    return {"name": name, "description": description, "input_schema": schema}


def body(style: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
         *, stream: bool = False, system: str | None = None) -> dict[str, Any]:
    """The full request body the contract pins for one turn."""
    if style == "openai":
        out: dict[str, Any] = {"model": MODEL, "messages": messages}
        if tools:
            out["tools"] = tools
            out["tool_choice"] = "auto"
        if stream:
            out["stream"] = True
            out["stream_options"] = {"include_usage": True}
        return out
    out = {"model": MODEL, "max_tokens": 4096}
    if system:
        out["system"] = system
    out["messages"] = messages
    if tools:
        out["tools"] = tools
    if stream:
        out["stream"] = True
    return out


# ---------------------------------------------------------------- provider pairing rules


def pairing_problems(style: str, messages: list[dict[str, Any]]) -> list[str]:
    """Why a real provider would refuse this message list (empty when it would accept it)."""
    if style == "openai":
        return _openai_pairing(messages)
    return _anthropic_pairing(messages)


def _openai_pairing(messages: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        if message.get("role") == "tool":
            problems.append(f"message {i}: tool message without a preceding assistant tool_calls")
            i += 1
            continue
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        i += 1
        if not calls:
            continue
        wanted = [c["id"] for c in calls]
        answered: list[str] = []
        while i < len(messages) and messages[i].get("role") == "tool":
            answered.append(messages[i].get("tool_call_id"))
            i += 1
        if sorted(answered) != sorted(wanted):
            problems.append(f"tool_calls {wanted} answered by tool messages {answered}")
    return problems


def _anthropic_pairing(messages: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    for i, message in enumerate(messages):
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if message.get("role") == "user" and i > 0:
            prev = messages[i - 1].get("content")
            prev_uses = {b.get("id") for b in prev if b.get("type") == "tool_use"} \
                if isinstance(prev, list) else set()
            for b in blocks:
                if b.get("type") == "tool_result" and b.get("tool_use_id") not in prev_uses:
                    problems.append(f"message {i}: tool_result {b.get('tool_use_id')} has no tool_use")
        if message.get("role") != "assistant" or not uses:
            continue
        nxt = messages[i + 1] if i + 1 < len(messages) else None
        if nxt is None or nxt.get("role") != "user" or not isinstance(nxt.get("content"), list):
            problems.append(f"message {i}: tool_use {uses} not followed by a user tool_result turn")
            continue
        leading: list[str] = []
        for b in nxt["content"]:
            if b.get("type") != "tool_result":
                break
            leading.append(b.get("tool_use_id"))
        if sorted(leading) != sorted(uses):
            problems.append(f"message {i}: tool_use {uses} answered by tool_result {leading}")
    return problems

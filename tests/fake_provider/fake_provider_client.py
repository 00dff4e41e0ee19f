"""Client-side helpers for the fake-provider tests: post to a session the way a port
does, and parse/assemble SSE streams the way toolnexus ports do (facts C9)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from toolnexus_conformance.fake_provider import Session

OPENAI_KEY = "sk-test-secret-123"
ANTHROPIC_KEY = "ak-test-secret-456"


def headers_for(style: str) -> dict[str, str]:
    if style == "openai":
        return {"Authorization": f"Bearer {OPENAI_KEY}"}
    return {"x-api-key": ANTHROPIC_KEY, "anthropic-version": "2023-06-01"}


def endpoint(session: Session) -> str:
    suffix = "/chat/completions" if session.style == "openai" else "/messages"
    return session.base_url + suffix


def minimal_body(style: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "test-model", "messages": [{"role": "user", "content": "hi"}]}
    if style == "anthropic":
        body["max_tokens"] = 4096
    body.update(extra)
    return body


def post(
    client: httpx.Client, session: Session, body: Any, headers: dict[str, str] | None = None
) -> httpx.Response:
    sent_headers = headers_for(session.style) if headers is None else headers
    if isinstance(body, (bytes, str)):
        return client.post(
            endpoint(session),
            content=body,
            headers={**sent_headers, "Content-Type": "application/json"},
        )
    return client.post(endpoint(session), json=body, headers=sent_headers)


def sse_events(text: str) -> list[tuple[str | None, str]]:
    """(event name or None, data payload) per event, split on blank lines."""
    events: list[tuple[str | None, str]] = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[len("event:") :].strip()
            elif line.startswith("data:"):
                data.append(line[len("data:") :].strip())
        events.append((name, "\n".join(data)))
    return events


def assemble_openai(text: str) -> dict[str, Any]:
    """Text, tool calls by index (arguments appended), finish reason, usage, [DONE] seen."""
    content = ""
    calls: dict[int, dict[str, str]] = {}
    finish: str | None = None
    usage: dict[str, int] | None = None
    done = False
    for _, data in sse_events(text):
        if data == "[DONE]":
            done = True
            continue
        chunk = json.loads(data)
        if chunk.get("usage"):
            usage = chunk["usage"]
        for choice in chunk["choices"]:
            delta = choice["delta"]
            content += delta.get("content") or ""
            for part in delta.get("tool_calls", []):
                call = calls.setdefault(part["index"], {"id": "", "name": "", "arguments": ""})
                call["id"] = part.get("id", call["id"])
                function = part.get("function", {})
                call["name"] += function.get("name", "")
                call["arguments"] += function.get("arguments", "")
            finish = choice.get("finish_reason") or finish
    return {
        "text": content,
        "tool_calls": [calls[i] for i in sorted(calls)],
        "finish_reason": finish,
        "usage": usage,
        "done": done,
    }


def assemble_anthropic(text: str) -> dict[str, Any]:
    """Blocks by index with input parsed from partial_json; usage summed over
    message_start and message_delta exactly as ports do."""
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    stop: str | None = None
    usage = {"input_tokens": 0, "output_tokens": 0}
    names: list[str] = []
    for name, data in sse_events(text):
        event = json.loads(data)
        assert name == event["type"], "event: line must match the JSON type"
        names.append(name)
        kind = event["type"]
        if kind == "message_start":
            for key in usage:
                usage[key] += event["message"]["usage"].get(key, 0)
        elif kind == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif kind == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "text_delta":
                blocks[event["index"]]["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                blocks[event["index"]]["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                blocks[event["index"]]["signature"] = delta["signature"]
            else:
                partial[event["index"]] = partial.get(event["index"], "") + delta["partial_json"]
        elif kind == "message_delta":
            stop = event["delta"]["stop_reason"]
            for key in usage:
                usage[key] += event["usage"].get(key, 0)
    for index, raw in partial.items():
        blocks[index]["input"] = json.loads(raw) if raw else {}
    return {
        "content": [blocks[i] for i in sorted(blocks)],
        "stop_reason": stop,
        "usage": usage,
        "event_names": names,
    }

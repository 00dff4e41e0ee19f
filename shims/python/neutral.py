"""Shapes the python port's objects into the shim protocol's JSON (SPEC §4, §6).

Two kinds of data leave the shim. *Wire data* (Requests, Answers, transcripts) is what a
Python host would put on the wire: the port's dataclasses turned into dicts. The port
itself ships no serializer, and ``dataclasses.asdict`` would write ``"url": null`` for an
absent optional field; a host that follows the port's own docstring ("byte-identical wire
data", optional keys) drops ``None`` fields instead, so that is what this module does —
on the dataclass fields only, never inside ``data`` or a transcript, which pass through
as the port holds them. *Non-wire data* (RunResult's other fields, metric events, stream
envelopes) is idiomatic snake_case in this port and is renamed to the neutral camelCase.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import toolnexus as tn


def request_wire(request: Any) -> dict[str, Any]:
    """A Request (or Answer) dataclass as a host writes it: absent optional keys omitted."""
    if isinstance(request, dict):
        return request
    return {f.name: getattr(request, f.name) for f in dataclasses.fields(request) if getattr(request, f.name) is not None}


def request_from_wire(wire: dict[str, Any]) -> tn.Request:
    return tn.Request(
        id=wire["id"],
        kind=wire["kind"],
        prompt=wire["prompt"],
        url=wire.get("url"),
        data=wire.get("data"),
        expiresAt=wire.get("expiresAt"),
    )


def answer_from_wire(wire: dict[str, Any]) -> tn.Answer:
    return tn.Answer(id=wire["id"], ok=wire["ok"], data=wire.get("data"), reason=wire.get("reason"))


def usage(raw: dict[str, Any] | None) -> dict[str, int]:
    raw = raw or {}
    return {
        "promptTokens": raw.get("prompt_tokens", 0),
        "completionTokens": raw.get("completion_tokens", 0),
        "totalTokens": raw.get("total_tokens", 0),
    }


def run_result(result: Any) -> dict[str, Any]:
    """The neutral RunResult: wire fields as the port holds them, the rest renamed."""
    calls = [
        {"name": c.get("name"), "args": c.get("args"), "output": c.get("output"), "isError": bool(c.get("is_error"))}
        for c in result.tool_calls
    ]
    wire: dict[str, Any] = {
        "status": result.status,
        "text": result.text,
        "messages": result.messages,
        "model": result.model,
        "turns": result.turns,
        "toolCalls": calls,
        "toolCallCount": result.tool_call_count,
        "usage": usage(result.usage),
    }
    if result.limit is not None:
        wire["limit"] = result.limit
    if result.pending is not None:
        wire["pending"] = request_wire(result.pending)
    return wire


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def metric(event: dict[str, Any]) -> dict[str, Any]:
    """A snake_case metric event in neutral camelCase (``is_error`` -> ``isError``, ...)."""
    return {_camel(k): v for k, v in event.items()}


def stream_event(event: dict[str, Any]) -> dict[str, Any]:
    """One of the port's stream dicts in the neutral shape of SPEC §4."""
    kind = event.get("type")
    if kind == "tool_result":
        return {
            "type": kind,
            "id": event.get("id"),
            "name": event.get("name"),
            "output": event.get("output"),
            "isError": bool(event.get("is_error")),
        }
    if kind == "usage":
        return {"type": kind, "usage": usage(event.get("usage"))}
    if kind == "pending":
        return {"type": kind, "request": request_wire(event["request"])}
    if kind == "done":
        return {"type": kind, "result": run_result(event["result"])}
    return dict(event)


def tool_result(result: Any) -> dict[str, Any]:
    return {"output": result.output, "isError": bool(result.is_error)}

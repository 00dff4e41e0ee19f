"""Shapes the python port's objects into the shim protocol's JSON (SPEC §4, §6).

A shim adds nothing and cleans nothing (SPEC §6). The port ships no serializer for its
§10 wire types, so a Request or Answer goes out as the port's own types declare it: its
declared fields, with ``None`` (Python's "no value", the port's ``Optional[...] = None``)
meaning the key is absent — the port's Request "mirrors js/src/types.ts", whose optional
keys are left out, and the port projects its other wire dataclasses the same way rather than
``asdict``-ing them (``toolnexus/classifier.py``). The RunResult is a value, not wire data
(upstream §8): it goes out as ``dataclasses.asdict`` writes it, and the harness reads its
``None`` fields through the value model of SPEC §6. Dicts the port builds itself
(transcripts, stream events, metric events, tool-call records) pass through as the port
holds them.

The one thing done to non-wire data is renaming: RunResult's fields, metric events and
stream envelopes are idiomatic snake_case in this port and get the protocol's camelCase
names (``tool_calls`` -> ``toolCalls``), key for key, each value left as the serializer
writes it. Wire data inside them (``messages``, a Request) is never renamed.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import toolnexus as tn


def wire(value: Any) -> Any:
    """A port object as ``dataclasses.asdict`` writes it (a dict or list passes through)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def request_wire(request: Any) -> Any:
    """A Request (or Answer) on the wire: its declared fields in declaration order, a
    ``None`` field left out (a dict, as a port may hold one, passes through)."""
    if dataclasses.is_dataclass(request) and not isinstance(request, type):
        return {f.name: getattr(request, f.name) for f in dataclasses.fields(request) if getattr(request, f.name) is not None}
    return request


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


def camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def renamed(mapping: Any) -> Any:
    """A snake_case dict with camelCase keys, values untouched (anything else passes)."""
    if not isinstance(mapping, dict):
        return mapping
    return {camel(k): v for k, v in mapping.items()}


def run_result(result: Any) -> Any:
    """The RunResult as ``asdict`` writes it, its own field names (and its tool-call records'
    and usage's) renamed to camelCase; ``messages`` is left as written and ``pending`` is the
    Request on the wire."""
    written = wire(result)
    if not isinstance(written, dict):
        return written
    neutral: dict[str, Any] = {}
    for key, value in written.items():
        if key == "pending":
            value = request_wire(getattr(result, "pending", value))
        elif key == "tool_calls" and isinstance(value, list):
            value = [renamed(call) for call in value]
        elif key == "usage":
            value = renamed(value)
        neutral[camel(key)] = value
    return neutral


def metric(event: dict[str, Any]) -> dict[str, Any]:
    """A snake_case metric event in neutral camelCase (``is_error`` -> ``isError``, ...)."""
    return renamed(event)


def stream_event(event: dict[str, Any]) -> dict[str, Any]:
    """One of the port's stream dicts with camelCase keys; its usage renamed the same way,
    its Request and RunResult written as above."""
    neutral: dict[str, Any] = {}
    for key, value in event.items():
        if key == "usage":
            value = renamed(value)
        elif key == "request":
            value = request_wire(value)
        elif key == "result":
            value = run_result(value)
        neutral[camel(key)] = value
    return neutral


def tool_result(result: Any) -> dict[str, Any]:
    """The result inside an afterTool hook event (the protocol's own neutral shape)."""
    return {"output": result.output, "isError": result.is_error}

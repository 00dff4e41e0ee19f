"""The value model (SPEC.md §6): how the harness reads data a port leaves idiomatic.

Upstream pins the bytes of wire data — ``Request``, ``Answer``, ``data.calls``, transcripts
and stored conversations — but leaves the RunResult, stream event envelopes, metric events
and hook events idiomatic per language ("NOT byte-identical across ports", upstream §8).
A shim serializes those values with its language's generic serializer, so the language's
"no value" reaches the harness as it writes it: Python's ``None``, Java's ``null`` and a Go
nil slice all arrive as JSON ``null``. Read as values, that ``null`` means "no value", the
same as a key left out.

This module is the one place that reading happens: a key whose value is ``null`` is absent,
and a ``null`` list field is an empty list. It never descends into wire data carried inside
a value (a RunResult's ``messages`` and ``pending``, a pending event's ``request``, a tool
call's ``args``): those stay exactly as the port wrote them, for the key rules to judge.
"""

from __future__ import annotations

from typing import Any

__all__ = ["event_value", "hook_event_value", "metric_value", "run_result_value"]

# RunResult fields that carry wire data (left as written) and list fields (null -> []).
RESULT_WIRE_FIELDS = frozenset({"messages", "pending"})
RESULT_LIST_FIELDS = frozenset({"toolCalls"})
# Stream event fields that carry wire data or tool payloads (left as written).
EVENT_WIRE_FIELDS = frozenset({"request", "args", "calls"})


def _without_nulls(value: dict[str, Any], keep: frozenset[str] = frozenset()) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v is not None or k in keep}


def run_result_value(result: Any) -> Any:
    """A RunResult read as a value: null fields absent, a null ``toolCalls`` empty, its
    ``usage`` and tool-call records read the same way; ``messages`` and ``pending`` as written
    (a ``null`` transcript is the port's wire answer and stays for the rules to judge; a
    ``null`` ``pending`` is a field with no value, like any other)."""
    if not isinstance(result, dict):
        return result
    out: dict[str, Any] = {}
    for key, field in result.items():
        if key in RESULT_WIRE_FIELDS:
            if field is not None or key == "messages":
                out[key] = field  # a null transcript is the port's wire answer
            continue
        if field is None:
            if key in RESULT_LIST_FIELDS:
                out[key] = []
            continue
        if key == "usage" and isinstance(field, dict):
            field = _without_nulls(field)
        elif key == "toolCalls" and isinstance(field, list):
            field = [_without_nulls(call, keep=frozenset({"args"})) if isinstance(call, dict) else call for call in field]
        out[key] = field
    return out


def event_value(event: Any) -> Any:
    """A stream event envelope read as a value: null fields absent, its RunResult and usage
    read as values, its Request (wire data) and arguments as written."""
    if not isinstance(event, dict):
        return event
    out: dict[str, Any] = {}
    for key, field in event.items():
        if field is None and key not in EVENT_WIRE_FIELDS:
            continue
        if key == "result":
            field = run_result_value(field)
        elif key == "usage" and isinstance(field, dict):
            field = _without_nulls(field)
        out[key] = field
    return out


def metric_value(event: Any) -> Any:
    """A metric event read as a value: null fields absent."""
    return _without_nulls(event) if isinstance(event, dict) else event


def hook_event_value(event: Any) -> Any:
    """A hook event (``host.hook``'s ``event``) read as a value: null fields absent, the
    arguments as written, its tool result read the same way."""
    if not isinstance(event, dict):
        return event
    out = _without_nulls(event, keep=frozenset({"args"}))
    if isinstance(out.get("result"), dict):
        out["result"] = _without_nulls(out["result"])
    return out

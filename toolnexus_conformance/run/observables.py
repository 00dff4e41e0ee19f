"""The observables of a run (SPEC.md §5): what a golden holds and compares.

Built from a :class:`RunRecord`, before normalization. Only the normative projection of
port-shaped data goes in (RunResult's status/text/messages/pending/limit, the tool event's
normative fields, the port-error kind but not its wording, the request headers a rule pins
but not the client's own), so idiomatic per-port fields never show up as differences.
"""

from __future__ import annotations

import re
from typing import Any

from toolnexus_conformance.run.runner import PhaseRecord, RunRecord
from toolnexus_conformance.run.value_model import hook_event_value

RESULT_FIELDS = ("status", "text", "messages", "pending", "limit")
TOOL_EVENT_FIELDS = ("event", "tool", "source", "isError", "pending")
# Headers a rule pins (loop.openai-endpoint, loop.anthropic-endpoint) plus the body's type;
# user-agent, content-length, accept, connection and the like are each client's own.
PINNED_HEADERS = ("authorization", "x-api-key", "anthropic-version", "content-type")
EXECUTION_FIELDS = ("tool", "callId", "args", "answered")
SESSION_PREFIX = re.compile(r"^/s/[0-9a-z]+(?=/)")  # the fake provider's per-variant session root


def observables(record: RunRecord) -> dict[str, Any]:
    return {
        "scenario": record.variant.scenario.id,
        "variant": record.variant.name,
        "phases": [_phase(phase) for phase in record.phases],
    }


def _phase(phase: PhaseRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "entry": phase.entry,
        "requests": phase.requests,
        "http": [_http(path, headers) for path, headers in zip(phase.request_paths, phase.request_headers, strict=False)],
        "waitFor": phase.host.wait_for,
        "gets": phase.host.gets,
        "saves": phase.host.saves,
        "hooks": [_hook(call) for call in phase.host.hooks],
        "executions": [{k: e[k] for k in EXECUTION_FIELDS if k in e} for e in phase.executions],
        "toolEvents": [
            {k: m[k] for k in TOOL_EVENT_FIELDS if k in m} for m in phase.metrics if m.get("event") == "tool"
        ],
    }
    if phase.result is not None:
        out["result"] = project_result(phase.result)
    if phase.error is not None:
        out["error"] = {"kind": phase.error.get("kind")}
    if phase.entry == "stream":
        out["events"] = [_event(e) for e in phase.events if e.get("type") != "pending"]
        out["pendingEvents"] = [e for e in phase.events if e.get("type") == "pending"]
    return out


def _http(path: str, headers: dict[str, str]) -> dict[str, Any]:
    """The request path below the session root and the pinned headers (the fake provider
    already redacted the key; the endpoint rules checked it raw)."""
    return {"path": SESSION_PREFIX.sub("", path), "headers": {k: headers[k] for k in PINNED_HEADERS if k in headers}}


def _hook(call: dict[str, Any]) -> dict[str, Any]:
    """A host.hook call: which hook, for which tool, with which args (and afterTool's
    result). The call id is optional in the protocol, so it is not compared here; the
    executions carry it."""
    raw = hook_event_value(call.get("event"))
    event: dict[str, Any] = raw if isinstance(raw, dict) else {}
    out = {"hook": call.get("name"), "tool": event.get("name"), "args": event.get("args")}
    if "result" in event:
        out["result"] = event["result"]
    return out


def project_result(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in RESULT_FIELDS if k in result}


def _event(event: dict[str, Any]) -> dict[str, Any]:
    if event.get("type") == "done" and isinstance(event.get("result"), dict):
        return {"type": "done", "result": project_result(event["result"])}
    return event

"""The observables of a run (SPEC.md "Observables"): what a golden holds and compares.

Built from a :class:`RunRecord`, before normalization. Only the normative projection of
port-shaped data goes in (RunResult's status/text/messages/pending/limit, the tool event's
normative fields, the port-error kind but not its wording), so idiomatic per-port fields
never show up as differences.
"""

from __future__ import annotations

from typing import Any

from .runner import PhaseRecord, RunRecord

RESULT_FIELDS = ("status", "text", "messages", "pending", "limit")
TOOL_EVENT_FIELDS = ("event", "tool", "source", "isError", "pending")


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
        "waitFor": phase.host.wait_for,
        "saves": phase.host.saves,
        "executions": [
            {"tool": e.get("tool"), "callId": e.get("callId"), "answered": e.get("answered")}
            for e in phase.executions
        ],
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


def project_result(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in RESULT_FIELDS if k in result}


def _event(event: dict[str, Any]) -> dict[str, Any]:
    if event.get("type") == "done" and isinstance(event.get("result"), dict):
        return {"type": "done", "result": project_result(event["result"])}
    return event

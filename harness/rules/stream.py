"""Checks for the streaming event sequence (SPEC.md stream.*).

Only the order §10 pins is checked: a turn's tool_call events before its tools' results, a
call's pending before its tool_result, usage right before done on the final-answer turn
only, done last. The order of pending events of different calls is left free.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..observables import project_result
from ..paths import golden_dir
from ..runner import PhaseRecord, RunRecord
from . import NotApplicable, check
from .model import all_scripted_calls


def _streamed(record: RunRecord) -> list[PhaseRecord]:
    phases = [p for p in record.phases if p.entry == "stream"]
    if not phases:
        raise NotApplicable("not a streaming variant")
    return phases


def _position(events: list[dict[str, Any]], kind: str, call_id: str) -> int | None:
    for i, event in enumerate(events):
        if event.get("type") == kind and event.get("id") == call_id:
            return i
    return None


@check("stream.tool-call-events-first")
def tool_calls_first(record: RunRecord) -> Iterator[str]:
    turns = [t for t in record.variant.scenario.data["turns"] if t.get("toolCalls")]
    for phase in _streamed(record):
        for turn in turns:
            ids = [c["id"] for c in turn["toolCalls"]]
            calls = [_position(phase.events, "tool_call", i) for i in ids]
            results = [p for p in (_position(phase.events, "tool_result", i) for i in ids) if p is not None]
            if None in calls:
                if any(_position(phase.events, "tool_result", i) is not None for i in ids):
                    yield f"tool_call events missing for {[i for i, p in zip(ids, calls) if p is None]}"
                continue
            if results and max(calls) > min(results):
                yield f"a tool_result of the turn {ids} came before all its tool_call events"


def _pending_positions(events: list[dict[str, Any]]) -> Iterator[tuple[int, dict[str, Any]]]:
    for i, event in enumerate(events):
        if event.get("type") == "pending":
            yield i, event.get("request") or {}


@check("stream.pending-event")
def pending_event(record: RunRecord) -> Iterator[str]:
    phases = _streamed(record)
    suspending = [c for c in all_scripted_calls(record.variant).values() if c.kind in {"relay", "suspend"}]
    if not suspending:
        raise NotApplicable("no call suspends")
    for phase in phases:
        pendings = list(_pending_positions(phase.events))
        if not pendings:
            yield "no pending event although a call suspended"
            continue
        for call in suspending:
            mine = [i for i, r in pendings if any(isinstance(c, dict) and c.get("id") == call.id for c in (r.get("data") or {}).get("calls", []))]
            result_at = _position(phase.events, "tool_result", call.id)
            if mine and result_at is not None and min(mine) > result_at:
                yield f"the pending event of {call.id} came after its tool_result"
        halted = (phase.result or {}).get("pending")
        if halted and not any(r.get("id") == halted.get("id") for _, r in pendings):
            yield f"no pending event carried the surfaced Request {halted.get('id')!r}"


@check("stream.pending-mutual-order")
def pending_mutual_order(record: RunRecord) -> Iterator[str]:
    for phase in _streamed(record):
        if len(list(_pending_positions(phase.events))) < 2:
            raise NotApplicable("fewer than two pending events")
    return iter(())  # unpinned: the golden compares pending events as a set


@check("stream.done-last")
def done_last(record: RunRecord) -> Iterator[str]:
    for phase in _streamed(record):
        kinds = [e.get("type") for e in phase.events]
        if not kinds or kinds[-1] != "done":
            yield f"the last event is {kinds[-1] if kinds else None!r}, expected 'done'"
        if kinds.count("done") != 1:
            yield f"{kinds.count('done')} done events, expected exactly 1"
        done = phase.events[-1] if kinds and kinds[-1] == "done" else {}
        if phase.result is not None and project_result(done.get("result") or {}) != project_result(phase.result):
            yield "the done event's RunResult differs from the run's RunResult"


@check("stream.usage-before-done")
def usage_before_done(record: RunRecord) -> Iterator[str]:
    for phase in _streamed(record):
        kinds = [e.get("type") for e in phase.events]
        status = (phase.result or {}).get("status")
        if status == "done":
            if kinds.count("usage") != 1 or len(kinds) < 2 or kinds[-2] != "usage":
                yield f"a finished stream needs exactly one usage event right before done; got {kinds}"
        elif status == "pending" and "usage" in kinds:
            yield "a halted stream emitted a usage event"


@check("stream.same-observables")
def same_observables(record: RunRecord) -> Iterator[str]:
    from ..normalize import normalize

    for phase in _streamed(record):
        path = golden_dir() / record.variant.scenario.id / f"{record.variant.style}-run.json"
        if not path.exists():
            raise NotApplicable(f"no golden for the non-streaming run ({path.name})")
        golden = json.loads(path.read_text(encoding="utf-8"))
        want = golden["observables"]["phases"][0].get("result")
        got = normalize({"phases": [{"result": project_result(phase.result or {})}]})["phases"][0]["result"]
        if want != got:
            yield "the streamed RunResult differs from the non-streaming run's golden RunResult"

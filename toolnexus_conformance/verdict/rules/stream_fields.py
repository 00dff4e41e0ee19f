"""Checks for what stream events carry (SPEC.md stream.event-fields) and for the events of
a durable halt (stream.halt-events, the advisory stream.pending-on-halt).

Every field is compared with data the event claims to report: tool_call with the scripted
call, tool_result with the result the transcript holds for that call, pending with the
Request passed to waitFor, usage and done with the RunResult, text deltas with the text the
scripted turns of the phase carried.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.observables import project_result
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord

from . import NotApplicable, check
from .assistant_turn import served_turns
from .stream import pending_positions, position, streamed
from .transcript import Result, tool_turns

USAGE_KEYS = ("promptTokens", "completionTokens", "totalTokens")


def _results_by_call(facts: Facts, phase: PhaseRecord) -> dict[str, Result]:
    messages = (phase.result or {}).get("messages") or []
    return {r.call_id: r for turn in tool_turns(messages, facts.style) for r in turn.results}


def _recorded_error_flags(phase: PhaseRecord) -> dict[str, Any]:
    """isError per call id from RunResult.toolCalls, where the port names the call id."""
    calls = (phase.result or {}).get("toolCalls") or []
    return {c["id"]: c.get("isError") for c in calls if isinstance(c, dict) and "id" in c}


@check("stream.event-fields")
def event_fields(record: RunRecord, facts: Facts) -> Iterator[str]:
    phases = streamed(record)
    scripted = facts.calls
    for p, phase in enumerate(record.phases):
        if phase not in phases:
            continue
        results = _results_by_call(facts, phase)
        flags = _recorded_error_flags(phase)
        for i, event in enumerate(phase.events):
            where = f"events[{i}] ({event.get('type')})"
            kind = event.get("type")
            if kind == "tool_call":
                call = scripted.get(str(event.get("id")))
                if call is None:
                    yield f"{where}: id {event.get('id')!r} is no call of the script"
                    continue
                if event.get("name") != call.name:
                    yield f"{where}: name {event.get('name')!r}, the call is to {call.name!r}"
                if event.get("args") != call.arguments:
                    yield f"{where}: args {event.get('args')!r}, the call's parsed arguments are {call.arguments!r}"
            elif kind == "tool_result":
                yield from _tool_result(facts, where, event, results, flags, scripted)
            elif kind == "pending":
                # the Request's keys are keys.stream-events' and susp.request-keys' to judge
                request = event.get("request")
                if facts.in_process and request not in phase.host.wait_for:
                    yield f"{where}: request {request!r} equals no Request passed to waitFor"
            elif kind == "usage" and i + 1 < len(phase.events) and phase.events[i + 1].get("type") == "done":
                # the usage event before done carries the run's total; extra ones are stream.usage-before-done's
                usage = (phase.result or {}).get("usage") or {}
                want = {k: usage.get(k) for k in USAGE_KEYS}
                if event.get("usage") != want:
                    yield f"{where}: usage {event.get('usage')!r}, RunResult.usage is {want!r}"
            elif kind == "done" and phase.result is not None:
                if project_result(event.get("result") or {}) != project_result(phase.result):
                    yield f"{where}: result differs from the RunResult the run returned"
        yield from _text(record, facts, p, phase)


def _tool_result(
    facts: Facts,
    where: str,
    event: dict[str, Any],
    results: dict[str, Result],
    flags: dict[str, Any],
    scripted: dict[str, Any],
) -> Iterator[str]:
    call_id = str(event.get("id"))
    call = scripted.get(call_id)
    if call is not None and event.get("name") != call.name:
        yield f"{where}: name {event.get('name')!r}, the call is to {call.name!r}"
    got = results.get(call_id)
    if got is None:
        yield f"{where}: the transcript holds no result for {call_id}"
        return
    if event.get("output") != got.content:
        yield f"{where}: output {event.get('output')!r}, the transcript's result for {call_id} is {got.content!r}"
    flag = got.is_error if got.is_error is not None else flags.get(call_id)
    if flag is not None and "isError" in event and event["isError"] != flag:  # a missing key is keys.stream-events
        yield f"{where}: isError {event.get('isError')!r}, the recorded result for {call_id} has {flag!r}"


def _text(record: RunRecord, facts: Facts, p: int, phase: PhaseRecord) -> Iterator[str]:
    turns = [t for t in served_turns(record, facts) if t.phase == p]
    want = "".join(t.script.get("text") or "" for t in turns)
    got = "".join(str(e.get("delta")) for e in phase.events if e.get("type") == "text")
    if got != want:
        yield f"text events add up to {got!r}, the phase's turns streamed {want!r}"


def _durable_halt(record: RunRecord, facts: Facts) -> tuple[PhaseRecord, list[str], dict[str, Any]]:
    phases = streamed(record)
    if facts.in_process:
        raise NotApplicable("in-process path: no durable halt")
    turn = facts.halting_turn or ()
    first = facts.first_suspension
    if first is None:
        raise NotApplicable("no call suspends")
    phase = phases[0]
    pending = (phase.result or {}).get("pending")
    if not isinstance(pending, dict):
        raise NotApplicable("the stream did not halt (judged by susp.durable-halt)")
    return phase, [c.id for c in turn[first:]], pending


@check("stream.halt-events")
def halt_events(record: RunRecord, facts: Facts) -> Iterator[str]:
    phase, halted_and_later, pending = _durable_halt(record, facts)
    for call_id in halted_and_later:
        at = position(phase.events, "tool_result", call_id)
        if at is not None:
            yield f"events[{at}]: a tool_result for {call_id}, which is the halted call or after it"
    if not any(r.get("id") == pending.get("id") for _, r in pending_positions(phase.events)):
        yield f"no pending event carries the surfaced Request id {pending.get('id')!r}"
    done = next((e for e in reversed(phase.events) if e.get("type") == "done"), None)
    result = (done or {}).get("result") or {}
    if result.get("status") != "pending" or result.get("pending") != pending:
        yield f"the done event carries status {result.get('status')!r} and pending {result.get('pending')!r}, expected the halted RunResult"


@check("stream.pending-on-halt")
def pending_on_halt(record: RunRecord, facts: Facts) -> Iterator[str]:
    phase, _, pending = _durable_halt(record, facts)
    for i, request in pending_positions(phase.events):
        if request == pending:
            continue
        calls = [c.get("id") for c in (request.get("data") or {}).get("calls", []) if isinstance(c, dict)]
        carried = f" carrying data.calls {calls}" if calls else ""
        yield f"events[{i}]: a pending event for Request {request.get('id')!r}{carried} beside the surfaced one (the reference emits only the halted Request's)"

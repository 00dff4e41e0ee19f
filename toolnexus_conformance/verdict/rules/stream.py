"""Checks for the order of streaming events (SPEC.md stream.*, order rules).

Only the order the contract pins is checked: a turn's tool_call events in call order before
anything of that turn executes, a call's pending before its tool_result, usage right before
done on the final-answer turn only, done last. The order of pending events of different
calls is left free. Field contents and the durable-halt events live in stream_fields.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolnexus_conformance.golden.compare import compare_variant
from toolnexus_conformance.golden.normalize import normalize
from toolnexus_conformance.run.facts import Facts, ScriptedCall
from toolnexus_conformance.run.observables import observables, project_result
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord

from . import NotApplicable, check, counterpart_of
from .suspended_calls import request_is_for


def streamed(record: RunRecord) -> list[PhaseRecord]:
    phases = [p for p in record.phases if p.entry == "stream"]
    if not phases:
        raise NotApplicable("not a streaming variant")
    return phases


def position(events: list[dict[str, Any]], kind: str, call_id: str) -> int | None:
    for i, event in enumerate(events):
        if event.get("type") == kind and event.get("id") == call_id:
            return i
    return None


def pending_positions(events: list[dict[str, Any]]) -> Iterator[tuple[int, dict[str, Any]]]:
    for i, event in enumerate(events):
        if event.get("type") == "pending":
            request = event.get("request")
            yield i, request if isinstance(request, dict) else {}


def _pending_of(facts: Facts, events: list[dict[str, Any]], call: ScriptedCall) -> list[int]:
    return [i for i, r in pending_positions(events) if request_is_for(facts, call, r)]


@check("stream.tool-call-events-first")
def tool_calls_first(record: RunRecord, facts: Facts) -> Iterator[str]:
    phases = streamed(record)
    turns = [calls for calls in facts.first_turn_calls if calls]
    if not turns:
        raise NotApplicable("no turn with tool calls")
    for phase in phases:
        served = len(phase.requests)
        for n, calls in enumerate(turns[:served]):
            ids = [c.id for c in calls]
            found = [position(phase.events, "tool_call", i) for i in ids]
            if None in found:
                yield f"turn {n + 1}: no tool_call event for {[i for i, p in zip(ids, found, strict=False) if p is None]}"
                continue
            at = [p for p in found if p is not None]
            if at != sorted(at):
                yield f"turn {n + 1}: tool_call events are not in call order {ids} (positions {at})"
            after = [p for c in calls for p in _pending_of(facts, phase.events, c)]
            after += [p for p in (position(phase.events, "tool_result", i) for i in ids) if p is not None]
            if after and max(at) > min(after):
                kind = phase.events[min(after)].get("type")
                yield f"turn {n + 1}: a {kind} event (#{min(after)}) came before the last tool_call event (#{max(at)})"


@check("stream.pending-event")
def pending_event(record: RunRecord, facts: Facts) -> Iterator[str]:
    phases = streamed(record)
    suspending = [c for c in facts.calls.values() if c.suspends]
    if not suspending:
        raise NotApplicable("no call suspends")
    resolved_here = facts.in_process
    for phase in phases:
        kinds = [e.get("type") for e in phase.events]
        for call in suspending:
            if call.id not in {e.get("id") for e in phase.events if e.get("type") == "tool_call"}:
                continue  # not called in this phase
            mine = _pending_of(facts, phase.events, call)
            result_at = position(phase.events, "tool_result", call.id)
            if resolved_here and not mine:
                yield f"{call.id} suspended but no pending event carries its Request"
            if mine and result_at is not None and min(mine) > result_at:
                yield f"the pending event of {call.id} (#{min(mine)}) came after its tool_result (#{result_at})"
        for request, seen in zip(phase.host.wait_for, phase.host.pending_seen, strict=False):
            if seen is False and isinstance(request, dict):
                yield (f"waitFor was called for {request.get('id')!r} before the stream's consumer received its "
                       "pending event (nor did it within a second while waitFor waited)")
        halted = (phase.result or {}).get("pending")
        if isinstance(halted, dict):
            at = [i for i, r in pending_positions(phase.events) if r.get("id") == halted.get("id")]
            if not at:
                yield f"no pending event carried the surfaced Request {halted.get('id')!r}"
            elif "done" in kinds and min(at) > kinds.index("done"):
                yield "the halted call's pending event came after done"


@check("stream.pending-mutual-order")
def pending_mutual_order(record: RunRecord, facts: Facts) -> Iterator[str]:
    """The order of different calls' pending events is free (the golden compares them as a
    set), so what can be wrong is the set itself: one call's Request announced twice."""
    calls = [c for c in facts.calls.values() if c.suspends]
    seen = False
    for phase in streamed(record):
        emitted = [
            next((c.id for c in calls if request_is_for(facts, c, request)), None)
            for _, request in pending_positions(phase.events)
        ]
        known = [c for c in emitted if c is not None]
        seen = seen or len(known) >= 2
        twice = sorted({c for c in known if known.count(c) > 1})
        if twice:
            yield f"pending events announce {twice} more than once ({known}); any order is allowed, repeats are not"
    if not seen:
        raise NotApplicable("fewer than two pending events of known calls")


@check("stream.done-last")
def done_last(record: RunRecord, facts: Facts) -> Iterator[str]:
    for phase in streamed(record):
        kinds = [e.get("type") for e in phase.events]
        if not kinds or kinds[-1] != "done":
            yield f"the last event is {kinds[-1] if kinds else None!r}, expected 'done'"
        if kinds.count("done") != 1:
            yield f"{kinds.count('done')} done events, expected exactly 1"
        done = phase.events[-1] if kinds and kinds[-1] == "done" else {}
        if phase.result is not None and project_result(done.get("result") or {}) != project_result(phase.result):
            yield "the done event's RunResult differs from the run's RunResult"


@check("stream.usage-before-done")
def usage_before_done(record: RunRecord, facts: Facts) -> Iterator[str]:
    turns = facts.first_turns
    for phase in streamed(record):
        kinds = [e.get("type") for e in phase.events]
        if phase.result is None:
            continue  # the run failed; nothing is pinned about a stream that errors
        served = turns[: len(phase.requests)]
        final_answer = bool(served) and not served[-1].get("toolCalls")
        # judged against the done event wherever it is (what follows done is stream.done-last's)
        done = kinds.index("done") if "done" in kinds else len(kinds)
        if final_answer:
            if kinds.count("usage") != 1 or done < 1 or kinds[done - 1] != "usage":
                yield f"a stream ending on a final answer needs exactly one usage event right before done; got {kinds}"
        elif "usage" in kinds:
            what = "halted" if phase.result.get("status") == "pending" else "exhausted (last turn called tools)"
            yield f"a {what} stream emitted a usage event; usage belongs to the final-answer turn only: {kinds}"


STREAM_ONLY_BODY_KEYS = ("stream", "stream_options")


def _comparable(tree: dict[str, Any]) -> list[dict[str, Any]]:
    """Phases without what only a stream has (events, the stream body keys) or names itself."""
    out = []
    for phase in tree["phases"]:
        phase = {k: v for k, v in phase.items() if k not in {"entry", "events", "pendingEvents"}}
        phase["requests"] = [
            {k: v for k, v in body.items() if k not in STREAM_ONLY_BODY_KEYS} if isinstance(body, dict) else body
            for body in phase.get("requests", [])
        ]
        out.append(phase)
    return out


@check("stream.same-observables")
def same_observables(record: RunRecord, facts: Facts) -> Iterator[str]:
    streamed(record)
    if facts.uncalled_relay:
        raise NotApplicable("checked on the base variant (this one is judged by relay.uncalled-inert)")
    own_run = counterpart_of(record, "stream.same-observables")
    want = _comparable(own_run)
    got = _comparable(normalize(observables(record)))
    diff = compare_variant({"phases": want}, {"phases": got}, facts)
    for d in diff.failures[:12]:
        yield f"the stream differs from the same port's run ({facts.style}-run) at{d.render().strip().removeprefix('$')}"

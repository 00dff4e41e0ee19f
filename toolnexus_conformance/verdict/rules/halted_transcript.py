"""The halted-tool transcript rule and the durable-halt facts around it (SPEC.md halt.*,
susp.durable-halt, susp.placeholder, susp.first-in-order).

After a durable halt the transcript keeps the assistant turn with all its calls, the real
results of calls before the halted one, and exactly the halted call's placeholder; nothing
of later calls. The rule is checked on every copy a host could replay: the transcript the
run returned and the one saved to the store.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolnexus_conformance.run.facts import Facts, ScriptedCall
from toolnexus_conformance.run.runner import RunRecord

from . import NotApplicable, check
from .transcript import last_tool_turn


def halt_context(facts: Facts) -> tuple[tuple[ScriptedCall, ...], int]:
    """The halting turn and the index of its first suspension, on the durable path."""
    if facts.in_process:
        raise NotApplicable("in-process path: no durable halt")
    turn = facts.halting_turn
    if not turn:
        raise NotApplicable("no tool calls in the scenario")
    first = facts.first_suspension
    if first is None:
        raise NotApplicable("no call suspends")
    return turn, first


def _copies(record: RunRecord) -> Iterator[tuple[str, list[Any]]]:
    result = record.first.result or {}
    if "messages" in result:
        yield "the returned transcript", result["messages"]
    if record.first.host.saves:
        yield "the stored transcript", record.first.host.saves[-1]["messages"]


def _transcript_problems(record: RunRecord, facts: Facts, where: str, messages: list[Any]) -> Iterator[str]:
    turn, first = halt_context(facts)
    style = facts.style
    got = last_tool_turn(messages, style)
    if got is None:
        yield f"{where} has no assistant turn with tool calls"
        return
    want_ids = [c.id for c in turn]
    if got.call_ids != want_ids:
        yield f"{where}: the halted assistant turn carries calls {got.call_ids}, expected all of {want_ids}"
    want_results = want_ids[: first + 1]
    if got.result_ids != want_results:
        yield f"{where}: results are for {got.result_ids}, expected exactly {want_results} (earlier calls + the halted one)"
    if got.messages_after:
        yield f"{where}: {got.messages_after} message(s) follow the halted call's placeholder"
    pending = (record.first.result or {}).get("pending") or {}
    for call, result in zip(turn, got.results, strict=False):
        if call.id != result.call_id:
            break
        if call.id == turn[first].id:
            if result.content != pending.get("prompt"):
                yield f"{where}: placeholder for {call.id} is {result.content!r}, expected the Request's prompt {pending.get('prompt')!r}"
            if style == "anthropic" and result.is_error is not True:
                yield f"{where}: placeholder for {call.id} has is_error {result.is_error!r}, expected true"
        else:
            expected = facts.expected_real_output(call)
            if expected and result.content != expected[0]:
                yield f"{where}: result for {call.id} is {result.content!r}, expected its real output {expected[0]!r}"


@check("halt.transcript")
def halted_transcript(record: RunRecord, facts: Facts) -> Iterator[str]:
    halt_context(facts)
    copies = list(_copies(record))
    if not copies:
        yield "the halted run returned no transcript"
    for where, messages in copies:
        yield from _transcript_problems(record, facts, where, messages)


@check("halt.later-suspensions-dropped")
def later_dropped(record: RunRecord, facts: Facts) -> Iterator[str]:
    turn, first = halt_context(facts)
    later = [c.id for c in turn[first + 1 :]]
    if not later:
        raise NotApplicable("no call after the halted one")
    for where, messages in _copies(record):
        got = last_tool_turn(messages, facts.style)
        leaked = [r for r in (got.result_ids if got else []) if r in later]
        if leaked:
            yield f"{where} holds results for calls after the halted one: {leaked}"


def _halted(record: RunRecord) -> Iterator[str]:
    """The first phase ended in a halt: a RunResult with status pending and a Request."""
    result = record.first.result
    if result is None:
        yield f"the run ended with an error instead of halting: {record.first.error}"
        return
    if result.get("status") != "pending":
        yield f"status is {result.get('status')!r}, expected 'pending'"
    pending = result.get("pending")
    if not isinstance(pending, dict):
        yield "RunResult.pending is missing"
    elif result.get("text") != pending.get("prompt"):
        yield f"RunResult.text is {result.get('text')!r}, expected the pending Request's prompt {pending.get('prompt')!r}"


@check("susp.durable-halt")
def durable_halt(record: RunRecord, facts: Facts) -> Iterator[str]:
    halt_context(facts)
    yield from _halted(record)
    # the run ends after the halting turn's tools: no request follows the turn that halted
    halting = (facts.halting_turn_index or 0) + 1
    if len(record.first.requests) > halting:
        yield f"{len(record.first.requests) - halting} provider request(s) followed the turn that halted"


@check("halt.run-result")
def run_result(record: RunRecord, facts: Facts) -> Iterator[str]:
    halt_context(facts)
    yield from _halted(record)
    result = record.first.result or {}
    if "limit" in result:
        yield f"a halted RunResult carries limit {result['limit']!r}"
    if record.first.entry == "stream":
        done = next((e for e in reversed(record.first.events) if e.get("type") == "done"), None)
        got = (done or {}).get("result")
        if isinstance(got, dict) and isinstance(result.get("pending"), dict):
            for key in ("status", "pending", "text"):
                if got.get(key) != result.get(key):
                    yield f"the done event's result has {key} {got.get(key)!r}, the RunResult has {result.get(key)!r}"


@check("susp.placeholder")
def placeholder(record: RunRecord, facts: Facts) -> Iterator[str]:
    turn, first = halt_context(facts)
    pending = (record.first.result or {}).get("pending") or {}
    got = last_tool_turn((record.first.result or {}).get("messages") or [], facts.style)
    halted = next((r for r in (got.results if got else []) if r.call_id == turn[first].id), None)
    if halted is None:
        yield f"no placeholder result for the halted call {turn[first].id}"
        return
    if halted.content != pending.get("prompt"):
        yield f"placeholder content {halted.content!r} differs from the surfaced prompt {pending.get('prompt')!r}"
    url = pending.get("url")  # a port may write an absent url as null (keys checks report that)
    if isinstance(url, str) and url and isinstance(halted.content, str) and url in halted.content:
        yield "the placeholder carries the Request's url; it must be the prompt only"


@check("susp.first-in-order")
def first_in_order(record: RunRecord, facts: Facts) -> Iterator[str]:
    turn, first = halt_context(facts)
    if sum(c.kind in {"relay", "suspend"} for c in turn) < 2:
        raise NotApplicable("fewer than two suspensions in the turn")
    halted = turn[first]
    pending = (record.first.result or {}).get("pending") or {}
    if halted.kind == "relay":
        calls = (pending.get("data") or {}).get("calls") or [{}]
        if calls[0].get("id") != halted.id:
            yield f"the surfaced Request is not the first suspension in call order ({halted.id})"
    else:
        behaviour = facts.behaviour(halted.name)
        want = (behaviour.get("suspend") or behaviour.get("alwaysSuspend") or {}).get("id")
        if want is not None and pending.get("id") != want:
            yield f"surfaced Request id {pending.get('id')!r}; the first suspension in call order is {want!r} ({halted.id})"

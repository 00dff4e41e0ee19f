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

from ..runner import RunRecord
from . import NotApplicable, check
from .model import ScriptedCall, halting_turn, tools_by_name
from .transcript import last_tool_turn


def _halt_context(record: RunRecord) -> tuple[list[ScriptedCall], int]:
    if "waitFor" in (record.variant.scenario.data.get("host") or {}):
        raise NotApplicable("in-process path: no durable halt")
    turn = halting_turn(record.variant)
    if not turn:
        raise NotApplicable("no tool calls in the scenario")
    first = next((i for i, c in enumerate(turn) if c.kind in {"relay", "suspend"}), None)
    if first is None:
        raise NotApplicable("no call suspends")
    return turn, first


def expected_real_output(record: RunRecord, call: ScriptedCall) -> tuple[str, bool] | None:
    behaviour = tools_by_name(record.variant).get(call.name, {}).get("behaviour", {})
    if "reply" in behaviour:
        return behaviour["reply"], False
    if "fail" in behaviour:
        return behaviour["fail"], True
    return None


def _copies(record: RunRecord) -> Iterator[tuple[str, list[Any]]]:
    result = record.first.result or {}
    if "messages" in result:
        yield "the returned transcript", result["messages"]
    if record.first.host.saves:
        yield "the stored transcript", record.first.host.saves[-1]["messages"]


def _transcript_problems(record: RunRecord, where: str, messages: list[Any]) -> Iterator[str]:
    turn, first = _halt_context(record)
    style = record.variant.style
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
    for call, result in zip(turn, got.results):
        if call.id != result.call_id:
            break
        if call.id == turn[first].id:
            if result.content != pending.get("prompt"):
                yield f"{where}: placeholder for {call.id} is {result.content!r}, expected the Request's prompt {pending.get('prompt')!r}"
            if style == "anthropic" and result.is_error is not True:
                yield f"{where}: placeholder for {call.id} has is_error {result.is_error!r}, expected true"
        else:
            expected = expected_real_output(record, call)
            if expected and result.content != expected[0]:
                yield f"{where}: result for {call.id} is {result.content!r}, expected its real output {expected[0]!r}"


@check("halt.transcript")
def halted_transcript(record: RunRecord) -> Iterator[str]:
    _halt_context(record)
    copies = list(_copies(record))
    if not copies:
        yield "the halted run returned no transcript"
    for where, messages in copies:
        yield from _transcript_problems(record, where, messages)


@check("halt.later-suspensions-dropped")
def later_dropped(record: RunRecord) -> Iterator[str]:
    turn, first = _halt_context(record)
    later = [c.id for c in turn[first + 1 :]]
    if not later:
        raise NotApplicable("no call after the halted one")
    for where, messages in _copies(record):
        got = last_tool_turn(messages, record.variant.style)
        leaked = [r for r in (got.result_ids if got else []) if r in later]
        if leaked:
            yield f"{where} holds results for calls after the halted one: {leaked}"


@check("halt.run-result", "susp.durable-halt")
def run_result(record: RunRecord) -> Iterator[str]:
    turn, first = _halt_context(record)
    result = record.first.result
    if result is None:
        yield f"the run ended with an error instead of halting: {record.first.error}"
        return
    if result.get("status") != "pending":
        yield f"status is {result.get('status')!r}, expected 'pending'"
    pending = result.get("pending")
    if not isinstance(pending, dict):
        yield "RunResult.pending is missing"
        return
    if result.get("text") != pending.get("prompt"):
        yield f"RunResult.text is {result.get('text')!r}, expected the pending Request's prompt {pending.get('prompt')!r}"
    if "limit" in result:
        yield f"a halted RunResult carries limit {result['limit']!r}"


@check("susp.placeholder")
def placeholder(record: RunRecord) -> Iterator[str]:
    turn, first = _halt_context(record)
    pending = (record.first.result or {}).get("pending") or {}
    got = last_tool_turn((record.first.result or {}).get("messages") or [], record.variant.style)
    halted = next((r for r in (got.results if got else []) if r.call_id == turn[first].id), None)
    if halted is None:
        yield f"no placeholder result for the halted call {turn[first].id}"
        return
    if halted.content != pending.get("prompt"):
        yield f"placeholder content {halted.content!r} differs from the surfaced prompt {pending.get('prompt')!r}"
    url = pending.get("url")  # a port may write an absent url as null (keys checks report that)
    if isinstance(url, str) and isinstance(halted.content, str) and url in halted.content:
        yield "the placeholder carries the Request's url; it must be the prompt only"


@check("susp.first-in-order")
def first_in_order(record: RunRecord) -> Iterator[str]:
    turn, first = _halt_context(record)
    if sum(c.kind in {"relay", "suspend"} for c in turn) < 2:
        raise NotApplicable("fewer than two suspensions in the turn")
    halted = turn[first]
    pending = (record.first.result or {}).get("pending") or {}
    if halted.kind == "relay":
        calls = (pending.get("data") or {}).get("calls") or [{}]
        if calls[0].get("id") != halted.id:
            yield f"the surfaced Request is not the first suspension in call order ({halted.id})"
    else:
        behaviour = tools_by_name(record.variant)[halted.name].get("behaviour", {})
        want = (behaviour.get("suspend") or behaviour.get("alwaysSuspend") or {}).get("id")
        if want is not None and pending.get("id") != want:
            yield f"surfaced Request id {pending.get('id')!r}; the first suspension in call order is {want!r} ({halted.id})"

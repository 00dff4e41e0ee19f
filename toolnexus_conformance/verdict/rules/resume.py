"""Checks for the answer-carrying resume entry points (SPEC.md resume.*)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolnexus_conformance.run.facts import Facts, ScriptedCall
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord

from . import NotApplicable, check
from .relay_answers import DECLINED
from .transcript import ToolTurn, last_tool_turn, tool_turns

UNRESOLVED = "unresolved: "
MISSING = "no result supplied on resume for {name}"


def _resume(record: RunRecord, facts: Facts) -> PhaseRecord:
    resumed = record.resumed
    if resumed is None:
        if facts.resume is not None:
            raise NotApplicable("the first phase did not halt, so there was nothing to resume")
        raise NotApplicable("no resume phase in this scenario")
    return resumed


def _resumed_turn(record: RunRecord, facts: Facts) -> tuple[tuple[ScriptedCall, ...], int, ToolTurn]:
    """The halted turn as the provider saw it on the first request after resume."""
    phase = _resume(record, facts)
    if facts.resume_refused:
        raise NotApplicable("the resume is expected to be refused")
    turn = facts.halting_turn or ()
    first = facts.first_suspension
    if first is None or not phase.requests:
        raise NotApplicable("no halted turn reached the provider after resume")
    ids = [c.id for c in turn]
    for got in tool_turns(phase.requests[0].get("messages") or [], facts.style):
        if got.call_ids == ids:
            return turn, first, got
    raise NotApplicable("the halted turn is not in the first resumed request")


@check("resume.entry-points")
def entry_points(record: RunRecord, facts: Facts) -> Iterator[str]:
    phase = _resume(record, facts)
    if facts.resume_refused:
        raise NotApplicable("the resume is expected to be refused")
    if phase.error is not None:
        yield f"{phase.entry} failed: {phase.error.get('kind')}: {phase.error.get('message')}"
    elif phase.result is None:
        yield f"{phase.entry} returned no RunResult"


def _refusal_problems(phase: PhaseRecord) -> Iterator[str]:
    if phase.error is None or phase.error.get("kind") != "resume":
        yield f"{phase.entry} was not refused as a resume error (got {phase.error or phase.result!r})"
    if phase.requests:
        yield f"{len(phase.requests)} provider request(s) were made by a refused resume"
    if phase.host.saves:
        yield f"a refused resume saved {len(phase.host.saves)} transcript(s) to the store"


@check("resume.answer-id-must-match")
def answer_id_must_match(record: RunRecord, facts: Facts) -> Iterator[str]:
    phase = _resume(record, facts)
    answer, pending = phase.params.get("answer") or {}, phase.params.get("pending") or {}
    if answer.get("id") == pending.get("id"):
        raise NotApplicable("the Answer echoes the pending id")
    yield from _refusal_problems(phase)


@check("resume.needs-halted-turn")
def needs_halted_turn(record: RunRecord, facts: Facts) -> Iterator[str]:
    phase = _resume(record, facts)
    if not facts.resume_replaces_history:
        raise NotApplicable("the resume gets the halted transcript")
    yield from _refusal_problems(phase)


@check("resume.one-result-per-call")
def one_result_per_call(record: RunRecord, facts: Facts) -> Iterator[str]:
    turn, _, got = _resumed_turn(record, facts)
    if got.result_ids != got.call_ids:
        yield f"the resumed request answers {got.result_ids}, expected each of {got.call_ids} once, in order"
    for message in _resume(record, facts).provider_violations:
        yield f"the fake provider refused a resumed request: {message}"


@check("resume.keeps-prior-results")
def keeps_prior(record: RunRecord, facts: Facts) -> Iterator[str]:
    turn, first, got = _resumed_turn(record, facts)
    if first == 0:
        raise NotApplicable("no call before the halted one")
    halted = last_tool_turn((record.first.result or {}).get("messages") or [], facts.style)
    before = {r.call_id: r for r in (halted.results if halted else [])}
    after = {r.call_id: r for r in got.results}
    for call in turn[:first]:
        kept, now = before.get(call.id), after.get(call.id)
        if kept is None:
            continue
        if now is None:
            yield f"the result of {call.id} recorded before the halt is missing after resume"
        elif (now.content, now.is_error) != (kept.content, kept.is_error):
            yield f"the result of {call.id} changed on resume: {kept.content!r} -> {now.content!r}"
    if [r.call_id for r in got.results[:first]] != [c.id for c in turn[:first]]:
        yield f"results before the halted call are {got.result_ids[:first]}, expected {[c.id for c in turn[:first]]} in place"


@check("resume.replaces-placeholder")
def replaces_placeholder(record: RunRecord, facts: Facts) -> Iterator[str]:
    turn, first, got = _resumed_turn(record, facts)
    halted_id = turn[first].id
    mine = [r for r in got.results if r.call_id == halted_id]
    if len(mine) != 1:
        yield f"the halted call {halted_id} has {len(mine)} results after resume, expected exactly 1"
        return
    # What the slot should hold instead is the answer rules' (relay.answer-shapes,
    # relay.declined, relay.shorthand-one-call-only, susp.*): this rule judges only that the
    # placeholder itself is gone.
    prompt = ((record.first.result or {}).get("pending") or {}).get("prompt")
    if prompt is not None and mine[0].content == prompt:
        yield f"the placeholder {prompt!r} was left in place of the host's result"


def _supplied(answer: dict[str, Any], call_id: str) -> tuple[str, bool] | None:
    for entry in (answer.get("data") or {}).get("results") or []:
        if isinstance(entry, dict) and entry.get("id") == call_id:
            return str(entry.get("output")), bool(entry.get("isError"))
    return None


@check("resume.fills-later-slots")
def fills_later(record: RunRecord, facts: Facts) -> Iterator[str]:
    turn, first, got = _resumed_turn(record, facts)
    later: list[ScriptedCall] | tuple[ScriptedCall, ...] = turn[first + 1 :]
    pending_ids = {e.get("id") for e in ((_resume(record, facts).params.get("pending") or {}).get("data") or {}).get("calls", [])}
    later = [c for c in later if c.id not in pending_ids]
    if not later:
        raise NotApplicable("no call after the halted one outside the surfaced Request")
    answer = _resume(record, facts).params.get("answer") or {}
    results = {r.call_id: r for r in got.results}
    executed = {e.get("callId") for e in _resume(record, facts).executions}
    for call in later:
        result = results.get(call.id)
        supplied = _supplied(answer, call.id)
        if result is None:
            yield f"call {call.id} after the halted one has no result after resume"
        elif supplied is not None:
            if result.content != supplied[0]:
                yield f"call {call.id}: result {result.content!r}, expected the Answer's {supplied[0]!r}"
        else:
            if not isinstance(result.content, str) or not result.content:
                yield f"call {call.id}: expected an explicit error result, got {result.content!r}"
            if facts.style == "anthropic" and result.is_error is not True:
                yield f"call {call.id}: the filler result has is_error {result.is_error!r}, expected true"
            real = facts.expected_real_output(call)
            if real is not None and result.content == real[0]:
                yield f"call {call.id} carries its real output {real[0]!r}: it must not be re-executed"
        if call.id in executed:
            yield f"call {call.id} was re-executed on resume"


@check("resume.no-user-turn")
def no_user_turn(record: RunRecord, facts: Facts) -> Iterator[str]:
    _, _, got = _resumed_turn(record, facts)
    body = _resume(record, facts).requests[0]
    messages = body.get("messages") or []
    if got.messages_after:
        tail = messages[len(messages) - got.messages_after :]
        yield f"{got.messages_after} message(s) follow the resumed turn's results: {tail!r}"


@check("resume.non-relay-reexecutes")
def non_relay_reexecutes(record: RunRecord, facts: Facts) -> Iterator[str]:
    turn, first, got = _resumed_turn(record, facts)
    halted = turn[first]
    if halted.kind != "suspend":
        raise NotApplicable("the halted call is a relay call")
    phase = _resume(record, facts)
    answer, prompt = phase.params.get("answer") or {}, (phase.params.get("pending") or {}).get("prompt")
    runs = [e for e in phase.executions if e.get("callId") == halted.id]
    result = next((r for r in got.results if r.call_id == halted.id), None)
    content = result.content if result else None
    if not answer.get("ok"):
        if runs:
            yield f"the declined non-relay call {halted.id} ran {len(runs)} time(s) on resume; a declined answer runs nothing"
        if content != DECLINED + str(prompt):
            yield f"the declined non-relay call's result is {content!r}, expected {DECLINED + str(prompt)!r}"
        return
    if len(runs) != 1 or not runs[0].get("answered"):
        yield f"the halted non-relay call {halted.id} ran {len(runs)} time(s) on resume; expected once, with the answer"
    behaviour = facts.behaviour(halted.name)
    want: Any
    if "alwaysSuspend" in behaviour:
        want = UNRESOLVED + str(prompt)
    else:
        then = behaviour.get("then") or {}
        want = then.get("reply", (answer.get("data") or {}).get("output"))
    if want is not None and content != want:
        yield f"the re-executed call's result is {content!r}, expected {want!r}"


@check("resume.missing-result-text")
def missing_result_text(record: RunRecord, facts: Facts) -> Iterator[str]:
    turn, first, got = _resumed_turn(record, facts)
    phase = _resume(record, facts)
    answer, pending = phase.params.get("answer") or {}, phase.params.get("pending") or {}
    in_request = [e.get("id") for e in (pending.get("data") or {}).get("calls") or [] if isinstance(e, dict)]
    shorthand_fits = len(in_request) == 1 and "output" in (answer.get("data") or {})
    unfilled = []
    for call in turn[first:]:
        if _supplied(answer, call.id) is not None:
            continue
        if call.id in in_request and (not answer.get("ok") or shorthand_fits):
            continue
        if call.id not in in_request and call.id == turn[first].id:
            continue  # the halted non-relay call is re-executed, not filled
        unfilled.append(call)
    if not unfilled:
        raise NotApplicable("every slot after the halt is filled by the Answer")
    results = {r.call_id: r for r in got.results}
    for call in unfilled:
        want = MISSING.format(name=call.name)
        content = results[call.id].content if call.id in results else None
        if content != want:
            yield f"the unfilled slot {call.id} reads {content!r}; the reference writes {want!r}"


@check("resume.across-process")
def across_process(record: RunRecord, facts: Facts) -> Iterator[str]:
    phase = _resume(record, facts)
    if not facts.restart_before_resume:
        raise NotApplicable("the shim is not restarted before resuming")
    if phase.error is not None:
        yield f"resume in a fresh shim failed: {phase.error}"


@check("resume.may-halt-again")
def may_halt_again(record: RunRecord, facts: Facts) -> Iterator[str]:
    phase = _resume(record, facts)
    if facts.expect.get("resumedStatus") != "pending":
        raise NotApplicable("the resumed run is not expected to halt")
    result = phase.result or {}
    pending = result.get("pending")
    if result.get("status") != "pending" or not isinstance(pending, dict):
        yield f"the resumed run did not halt again: {phase.result or phase.error}"
        return
    if result.get("text") != pending.get("prompt"):
        yield f"the second halt's text is {result.get('text')!r}, expected its Request's prompt {pending.get('prompt')!r}"
    first_pending = (record.first.result or {}).get("pending") or {}
    if pending.get("id") == first_pending.get("id"):
        yield f"the second halt surfaces the first halt's Request id {pending.get('id')!r} again"
    turn = last_tool_turn(result.get("messages") or [], facts.style)
    if turn is None or not turn.results or turn.messages_after:
        yield "the second halted transcript does not end with the halted turn and its placeholder"
    elif turn.results[-1].content != pending.get("prompt"):
        yield f"the second halt's placeholder is {turn.results[-1].content!r}, expected {pending.get('prompt')!r}"

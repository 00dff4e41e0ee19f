"""Checks for the relay rules (ADR 0010 + the owner's decisions in SPEC.md "relay.*")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from toolnexus_conformance.helpers.json_types import json_type_name
from toolnexus_conformance.run.facts import Facts, ScriptedCall
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord

from . import NotApplicable, check
from .transcript import last_tool_turn, tool_turns

CALL_KEYS = {"id", "name", "input", "arguments"}
RELAY_PROMPT = "relay tool call {name} to the caller for execution"


def surfaced_requests(phase: PhaseRecord) -> Iterator[tuple[str, Any]]:
    """Every Request the port put on the wire in a phase, with where it was seen."""
    pending = (phase.result or {}).get("pending")
    if pending is not None:
        yield "RunResult.pending", pending
    for i, request in enumerate(phase.host.wait_for):
        yield f"waitFor[{i}]", request
    for i, event in enumerate(phase.events):
        if event.get("type") == "pending":
            yield f"events[{i}].request", event.get("request")


def relay_requests(record: RunRecord) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for p, phase in enumerate(record.phases):
        for where, request in surfaced_requests(phase):
            if isinstance(request, dict) and request.get("kind") == "tool_call":
                found.append((f"phase {p + 1} {where}", request))
    return found


def _calls(request: dict[str, Any]) -> list[Any]:
    calls = (request.get("data") or {}).get("calls")
    return calls if isinstance(calls, list) else []


def _require_relay(facts: Facts) -> None:
    if not facts.relay_tools or not facts.calls_relay:
        raise NotApplicable("no relay tool is called in this scenario")


@check("relay.request-kind")
def request_kind(record: RunRecord, facts: Facts) -> Iterator[str]:
    _require_relay(facts)
    turn = facts.halting_turn or ()
    suspending = [c for c in turn if c.kind in {"relay", "suspend"}]
    if facts.durable and suspending and suspending[0].kind == "relay":
        pending = (record.first.result or {}).get("pending")
        if not isinstance(pending, dict):
            yield "the run did not halt with a pending Request although a relay call was first to suspend"
            return
        if pending.get("kind") != "tool_call":
            yield f"RunResult.pending.kind is {pending.get('kind')!r}, expected 'tool_call'"
        if not _calls(pending):
            yield "RunResult.pending.data.calls is missing or empty"
    found = relay_requests(record)
    if not found:
        yield "no Request with kind 'tool_call' was surfaced although relay tools were called"
    for where, request in found:
        if "url" in request:
            yield f"{where} carries url {request['url']!r}; a relay Request has none"
        if set(request.get("data") or {}) != {"calls"}:
            yield f"{where}.data has keys {sorted(request.get('data') or {})}, expected exactly ['calls']"


@check("relay.call-entry-keys")
def call_entry_keys(record: RunRecord, facts: Facts) -> Iterator[str]:
    _require_relay(facts)
    types = {"id": "string", "name": "string", "input": "object", "arguments": "string"}
    for where, request in relay_requests(record):
        for i, entry in enumerate(_calls(request)):
            if not isinstance(entry, dict):
                yield f"{where}: data.calls[{i}] is a JSON {json_type_name(entry)}, not an object"
                continue
            if set(entry) != CALL_KEYS:
                extra, missing = sorted(set(entry) - CALL_KEYS), sorted(CALL_KEYS - set(entry))
                yield f"{where}: data.calls[{i}] keys differ: extra {extra}, missing {missing}"
            for key, kind in types.items():
                if key in entry and json_type_name(entry[key]) != kind:
                    yield f"{where}: data.calls[{i}].{key} is a JSON {json_type_name(entry[key])}, expected {kind}"


@check("relay.call-id-stamped")
def call_id_stamped(record: RunRecord, facts: Facts) -> Iterator[str]:
    _require_relay(facts)
    scripted = facts.calls
    for where, request in relay_requests(record):
        for i, entry in enumerate(_calls(request)):
            call_id = entry.get("id") if isinstance(entry, dict) else None
            call = scripted.get(call_id) if isinstance(call_id, str) else None
            if call is None:
                yield f"{where}: data.calls[{i}].id {call_id!r} is not a provider call id of this run"
            elif call.name != entry.get("name"):
                yield f"{where}: data.calls[{i}] names {entry.get('name')!r} but call {call.id} is {call.name!r}"


def _entries(record: RunRecord, facts: Facts) -> Iterator[tuple[str, dict[str, Any], ScriptedCall]]:
    scripted = facts.calls
    for where, request in relay_requests(record):
        for i, entry in enumerate(_calls(request)):
            if isinstance(entry, dict) and entry.get("id") in scripted:
                yield f"{where}: data.calls[{i}]", entry, scripted[entry["id"]]


@check("relay.arguments-raw-openai")
def arguments_raw_openai(record: RunRecord, facts: Facts) -> Iterator[str]:
    _require_relay(facts)
    if facts.style != "openai":
        raise NotApplicable("anthropic style sends input as an object")
    rewritten = facts.rewritten_args
    for where, entry, call in _entries(record, facts):
        if call.name in rewritten:
            continue
        if entry.get("arguments") != call.raw_arguments:
            yield f"{where}.arguments is {entry.get('arguments')!r}, not the provider's raw string {call.raw_arguments!r}"


@check("relay.arguments-parse-to-input")
def arguments_parse_to_input(record: RunRecord, facts: Facts) -> Iterator[str]:
    _require_relay(facts)
    rewritten = facts.rewritten_args
    for where, entry, call in _entries(record, facts):
        try:
            parsed = json.loads(entry.get("arguments", ""))
        except (TypeError, json.JSONDecodeError):
            yield f"{where}.arguments is not JSON: {entry.get('arguments')!r}"
            continue
        if parsed != entry.get("input"):
            yield f"{where}.arguments parses to {parsed!r}, but input is {entry.get('input')!r}"
        # a rewritten call's input is relay.args-rewrite's to judge
        if call.name not in rewritten and entry.get("input") != call.arguments:
            yield f"{where}.input is {entry.get('input')!r}, expected {call.arguments!r}"


@check("relay.arguments-anthropic-format")
def arguments_anthropic_format(record: RunRecord, facts: Facts) -> Iterator[str]:
    _require_relay(facts)
    rewritten = facts.rewritten_args
    if facts.style != "anthropic" and not rewritten:
        raise NotApplicable("openai style carries the raw string and no args rewrite makes the loop serialize")
    for where, entry, call in _entries(record, facts):
        if facts.style != "anthropic" and call.name not in rewritten:
            continue
        compact = json.dumps(entry.get("input"), separators=(",", ":"), ensure_ascii=False)
        if entry.get("arguments") != compact:
            yield f"{where}.arguments is {entry.get('arguments')!r}; the reference writes compact JSON {compact!r}"


@check("relay.args-rewrite")
def args_rewrite(record: RunRecord, facts: Facts) -> Iterator[str]:
    rewritten = facts.rewritten_args
    if not rewritten:
        raise NotApplicable("no beforeTool args rewrite in this scenario")
    seen = False
    for where, entry, call in _entries(record, facts):
        if call.name not in rewritten:
            continue
        seen = True
        want = rewritten[call.name]
        if entry.get("input") != want:
            yield f"{where}.input is {entry.get('input')!r}, expected the rewritten {want!r}"
        try:
            parsed = json.loads(entry.get("arguments", ""))
        except (TypeError, json.JSONDecodeError):
            parsed = None
        if parsed != want:
            yield f"{where}.arguments is {entry.get('arguments')!r}; it must serialize the rewritten input {want!r}"
        if want != call.arguments and entry.get("arguments") == call.raw_arguments:
            yield f"{where}.arguments is still the provider's original string {call.raw_arguments!r}"
    if not seen:
        yield "no relay Request carried the call whose arguments the hook rewrote"


@check("relay.calls-in-one-request")
def calls_in_one_request(record: RunRecord, facts: Facts) -> Iterator[str]:
    _require_relay(facts)
    if not facts.durable:
        raise NotApplicable("in-process path: one callback per call instead")
    turn = facts.halting_turn or ()
    suspending = [c for c in turn if c.kind in {"relay", "suspend"}]
    if not suspending or suspending[0].kind != "relay":
        raise NotApplicable("the first suspension of the turn is not a relay call")
    pending = (record.first.result or {}).get("pending") or {}
    got = [e.get("id") for e in _calls(pending) if isinstance(e, dict)]
    want = [c.id for c in turn if c.kind == "relay"]
    if got != want:
        yield f"RunResult.pending.data.calls ids are {got}, expected every relay call of the turn in order {want}"


@check("relay.non-relay-first-uncontaminated")
def non_relay_first(record: RunRecord, facts: Facts) -> Iterator[str]:
    turn = facts.halting_turn or ()
    suspending = [c for c in turn if c.kind in {"relay", "suspend"}]
    if not facts.durable or not suspending or suspending[0].kind != "suspend":
        raise NotApplicable("no non-relay suspension comes first in a durable turn")
    if not any(c.kind == "relay" for c in turn):
        raise NotApplicable("no relay call in the halting turn")
    pending = (record.first.result or {}).get("pending")
    if not isinstance(pending, dict):
        yield "the run did not halt on the non-relay suspension"
        return
    if pending.get("kind") == "tool_call" or "calls" in (pending.get("data") or {}):
        yield f"the surfaced non-relay Request carries relay calls: {pending!r}"
    produced = facts.native_request(suspending[0])
    if produced is not None and pending != produced:
        yield f"the surfaced Request is {pending!r}; expected exactly what the tool produced, {produced!r}"


@check("relay.inprocess-one-callback-per-call")
def one_callback_per_call(record: RunRecord, facts: Facts) -> Iterator[str]:
    _require_relay(facts)
    if facts.durable:
        raise NotApplicable("durable path")
    for p, phase in enumerate(record.phases):
        yield from (f"phase {p + 1}: {v}" for v in phase.host.violations if "outstanding" in v)
    relay_calls = [c.id for c in facts.calls.values() if c.kind == "relay"]
    seen: list[str] = []
    for where, request in relay_requests(record):
        if not where.split(" ", 2)[2].startswith("waitFor"):
            continue
        ids = [str(e.get("id")) for e in _calls(request) if isinstance(e, dict)]
        if len(ids) != 1:
            yield f"{where} carries {len(ids)} calls {ids}; each callback must carry exactly its own call"
        seen.extend(ids)
    if sorted(seen) != sorted(relay_calls):
        yield f"waitFor callbacks carried relay calls {sorted(seen)}, expected one each for {sorted(relay_calls)}"


@check("relay.not-a-tool-error")
def relay_not_a_tool_error(record: RunRecord, facts: Facts) -> Iterator[str]:
    _require_relay(facts)
    names = facts.relay_tools
    events = [m for phase in record.phases for m in phase.metrics if m.get("event") == "tool" and m.get("tool") in names]
    suspensions = [m for m in events if m.get("pending") is True]
    if not suspensions:
        yield f"no tool event with pending:true for the relay tools {sorted(names)} (tool events: {events})"
    for m in suspensions:
        # a missing or renamed isError key is keys.tool-event's failure
        if "isError" in m and m["isError"] is not False:
            yield f"relay suspension event has isError {m.get('isError')!r}, expected false: {m}"
        if m.get("source") != "relay":
            yield f"relay suspension event has source {m.get('source')!r}, expected 'relay': {m}"


def _mixed_turns(facts: Facts) -> list[tuple[ScriptedCall, ...]]:
    return [t for t in facts.turn_calls if any(c.kind == "relay" for c in t) and any(c.kind == "real" for c in t)]


@check("relay.alongside-real-tools")
def alongside_real_tools(record: RunRecord, facts: Facts) -> Iterator[str]:
    # Only turns the provider served, each judged in the phase that served it: a halt on an
    # earlier turn leaves later ones unplayed or to a resume (the golden comparison judges
    # whether the run stopped where it should).
    served_in = [phase for phase in record.phases for _ in phase.requests]
    indexed = [(i, t) for i, t in enumerate(facts.turn_calls) if i < len(served_in) and t in _mixed_turns(facts)]
    mixed = [t for _, t in indexed]
    if not mixed:
        raise NotApplicable("no served turn mixes relay calls with real tools")
    executions = [e for phase in record.phases for e in phase.executions]
    rewritten = facts.rewritten_args
    for turn in mixed:
        for call in (c for c in turn if c.kind == "real"):
            runs = [e for e in executions if e.get("callId") == call.id]
            if len(runs) != 1:
                yield f"real tool call {call.id} ({call.name}) ran {len(runs)} time(s) in a turn with relay calls; expected once"
            want = rewritten.get(call.name, call.arguments)
            for run in runs:
                if "args" in run and run["args"] != want:
                    yield f"real tool call {call.id} ran with {run['args']!r}, expected its own arguments {want!r}"
    if facts.durable:
        yield from _alongside_durable(served_in[indexed[-1][0]], facts, mixed[-1])
    else:
        yield from _alongside_inprocess(record, facts, mixed)


def _alongside_inprocess(record: RunRecord, facts: Facts, mixed: list[tuple[ScriptedCall, ...]]) -> Iterator[str]:
    style = facts.style
    bodies = [body for phase in record.phases for body in phase.requests]
    for turn in mixed:
        ids = [c.id for c in turn]
        seen = [t for body in bodies for t in tool_turns(body.get("messages") or [], style) if t.call_ids == ids]
        if not seen:
            yield f"no later request carries the turn {ids} with its results"
            continue
        if seen[-1].result_ids != ids:
            yield f"the turn's results are for {seen[-1].result_ids}, expected one per call in call order {ids}"
        by_id = {r.call_id: r for r in seen[-1].results}
        for call in (c for c in turn if c.kind == "real"):
            real = facts.expected_real_output(call)
            got = by_id.get(call.id)
            if real is not None and got is not None and got.content != real[0]:
                yield f"real tool call {call.id}'s result is {got.content!r}, expected its own output {real[0]!r}"


def _alongside_durable(phase: PhaseRecord, facts: Facts, turn: tuple[ScriptedCall, ...]) -> Iterator[str]:
    halted = next((i for i, c in enumerate(turn) if c.kind in {"relay", "suspend"}), None)
    last = last_tool_turn((phase.result or {}).get("messages") or [], facts.style)
    if halted is None or last is None:
        yield "the durable run did not leave a halted tool turn in its transcript"
        return
    by_id = {r.call_id: r for r in last.results}
    for i, call in enumerate(turn):
        if call.kind != "real":
            continue
        got = by_id.get(call.id)
        if i > halted and got is not None:
            yield f"real tool call {call.id} after the halted call kept its result {got.content!r} in the halted transcript"
        real = facts.expected_real_output(call)
        if i < halted and real is not None and (got is None or got.content != real[0]):
            yield f"real tool call {call.id} before the halted call has result {getattr(got, 'content', None)!r}, expected {real[0]!r}"


@check("relay.prompt-text")
def prompt_text(record: RunRecord, facts: Facts) -> Iterator[str]:
    _require_relay(facts)
    for where, request in relay_requests(record):
        calls = _calls(request)
        name = calls[0].get("name") if calls and isinstance(calls[0], dict) else "?"
        if request.get("prompt") != RELAY_PROMPT.format(name=name):
            yield f"{where}.prompt is {request.get('prompt')!r}; the reference says {RELAY_PROMPT.format(name=name)!r}"


@check("relay.multi-round")
def multi_round(record: RunRecord, facts: Facts) -> Iterator[str]:
    rounds = [[c.id for c in turn if c.kind == "relay"] for turn in facts.turn_calls]
    rounds = [r for r in rounds if r]
    if len(rounds) < 2:
        raise NotApplicable("fewer than two turns call a relay tool")
    got = {e.get("id") for _, r in relay_requests(record) for e in _calls(r) if isinstance(e, dict)}
    final = (record.phases[-1].result or {}).get("pending") or {}
    still_pending = {e.get("id") for e in _calls(final) if isinstance(e, dict)}
    results = final_results(record, facts.style)
    for n, ids in enumerate(rounds, start=1):
        for call_id in ids:
            if call_id not in got:
                yield f"round {n}: relay call {call_id} was never surfaced"
            elif call_id not in still_pending and call_id not in results:
                yield f"round {n}: the result of relay call {call_id} never reached a later request"


def final_results(record: RunRecord, style: str) -> dict[str, Any]:
    """The results the provider finally saw for every call, by call id (last request wins)."""
    results: dict[str, Any] = {}
    for phase in record.phases:
        for body in phase.requests:
            for turn in tool_turns(body.get("messages") or [], style):
                for r in turn.results:
                    results[r.call_id] = r
    return results

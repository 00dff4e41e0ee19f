"""Checks for the §10 in-process path and the suspension's observability (SPEC.md susp.*).

The durable-halt facts (susp.durable-halt, susp.placeholder, susp.first-in-order) live with
the halted-tool transcript rule in halted_transcript.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolnexus_conformance.helpers.schemas import validate
from toolnexus_conformance.run.facts import Facts, ScriptedCall
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord

from . import NotApplicable, check
from .relay import final_results, surfaced_requests

DECLINED, UNRESOLVED = "declined/expired: ", "unresolved: "


def _in_process(facts: Facts) -> None:
    if not facts.in_process:
        raise NotApplicable("durable path: no waitFor")


def _native_suspending(facts: Facts, behaviour_key: str) -> list[tuple[ScriptedCall, dict[str, Any]]]:
    out = []
    for call in facts.calls.values():
        behaviour = facts.behaviour(call.name)
        if behaviour_key in behaviour and call.name not in facts.hook_suspends:
            out.append((call, behaviour[behaviour_key]))
    return out


def _host_answer(record: RunRecord, request_id: str) -> dict[str, Any]:
    """The Answer the host gave the first phase's waitFor for ``request_id`` (as it logged it)."""
    for exchange in record.first.host.exchanges:
        if isinstance(exchange.request, dict) and exchange.request.get("id") == request_id and exchange.answer:
            return exchange.answer
    return {}


def _executions(record: RunRecord, call_id: str) -> list[dict[str, Any]]:
    return [e for e in record.first.executions if e.get("callId") == call_id]


def _hooks(record: RunRecord, name: str, call: ScriptedCall) -> list[dict[str, Any]]:
    found = []
    for hook in record.first.host.hooks:
        event = hook.get("event") or {}
        if hook.get("name") == name and (event.get("id") == call.id or (event.get("id") is None and event.get("name") == call.name)):
            found.append(hook)
    return found


def _tool_events(phase: PhaseRecord, tool: str) -> list[dict[str, Any]]:
    return [m for m in phase.metrics if m.get("event") == "tool" and m.get("tool") == tool]


def _waits_for(record: RunRecord, request_id: str) -> int:
    return sum(1 for r in record.first.host.wait_for if isinstance(r, dict) and r.get("id") == request_id)


@check("susp.waitfor-retry-once")
def retry_once(record: RunRecord, facts: Facts) -> Iterator[str]:
    _in_process(facts)
    cases = [(c, r) for c, r in _native_suspending(facts, "suspend") if (facts.scripted_answer(r["id"]) or {}).get("ok")]
    if not cases:
        raise NotApplicable("no suspending native tool answered ok")
    results = final_results(record, facts.style)
    for call, request in cases:
        runs = _executions(record, call.id)
        if [e.get("answered") for e in runs] != [False, True]:
            yield f"{call.id} ran {len(runs)} time(s) (answered: {[e.get('answered') for e in runs]}); expected once, then once more with the answer"
        elif runs[0].get("args") != runs[1].get("args"):
            yield f"{call.id} was retried with other arguments: {runs[0].get('args')!r} -> {runs[1].get('args')!r}"
        if _waits_for(record, request["id"]) != 1:
            yield f"waitFor was called {_waits_for(record, request['id'])} time(s) for {request['id']!r}, expected once"
        if len(_hooks(record, "beforeTool", call)) > 1:
            yield f"beforeTool was asked {len(_hooks(record, 'beforeTool', call))} times for {call.id}; the retry must not ask it again"
        if "afterTool" in record.first.params.get("hooks", []) and len(_hooks(record, "afterTool", call)) != 1:
            yield f"afterTool saw {len(_hooks(record, 'afterTool', call))} result(s) of {call.id}, expected exactly the retried one"
        then = facts.behaviour(call.name)["then"]
        answer = _host_answer(record, request["id"])
        want = then["reply"] if "reply" in then else (answer.get("data") or {}).get("output", "")
        got = results.get(call.id)
        if got is not None and got.content != want:
            yield f"the provider saw {got.content!r} for {call.id}, expected the retried output {want!r}"


@check("susp.declined")
def declined(record: RunRecord, facts: Facts) -> Iterator[str]:
    _in_process(facts)
    cases = [(c, r) for c, r in _native_suspending(facts, "suspend") if (facts.scripted_answer(r["id"]) or {}).get("ok") is False]
    if not cases:
        raise NotApplicable("no suspending native tool declined")
    results = final_results(record, facts.style)
    for call, request in cases:
        if len(_executions(record, call.id)) != 1:
            yield f"{call.id} was re-executed after ok:false"
        if _hooks(record, "afterTool", call):
            yield f"afterTool was called for the declined call {call.id}"
        events = _tool_events(record.first, call.name)
        if len(events) != 1:
            yield f"{len(events)} tool events for {call.name}, expected only the suspension's: {events}"
        yield from _result_is(facts, results, call.id, DECLINED + request["prompt"])


@check("susp.unresolved")
def unresolved(record: RunRecord, facts: Facts) -> Iterator[str]:
    _in_process(facts)
    cases = _native_suspending(facts, "alwaysSuspend")
    if not cases:
        raise NotApplicable("no always-suspending tool")
    results = final_results(record, facts.style)
    for call, request in cases:
        if _waits_for(record, request["id"]) != 1:
            yield f"waitFor was called {_waits_for(record, request['id'])} time(s) for {request['id']!r}, expected once"
        if len(_executions(record, call.id)) != 2:
            yield f"{call.id} ran {len(_executions(record, call.id))} time(s), expected twice (the call and one retry)"
        yield from _result_is(facts, results, call.id, UNRESOLVED + request["prompt"])


def _result_is(facts: Facts, results: dict[str, Any], call_id: str, content: str) -> Iterator[str]:
    got = results.get(call_id)
    if got is None:
        yield f"the provider never received a result for {call_id}"
        return
    if got.content != content:
        yield f"result for {call_id} is {got.content!r}, expected {content!r}"
    if facts.style == "anthropic" and got.is_error is not True:
        yield f"result for {call_id} has is_error {got.is_error!r}, expected true"


@check("susp.waitfor-error-aborts")
def waitfor_error_aborts(record: RunRecord, facts: Facts) -> Iterator[str]:
    if not facts.waitfor_raises:
        raise NotApplicable("the host's waitFor does not raise")
    error = record.first.error
    if error is None:
        yield f"the run did not fail although waitFor raised (status {(record.first.result or {}).get('status')!r})"
    elif error.get("kind") != "run":
        yield f"the run failed with a port error of kind {error.get('kind')!r}, expected 'run'"
    # The waitFor fails during the tools of the first turn with a suspending call: the requests
    # up to and including the one that served that turn are the run's, any later one is not.
    turn = facts.first_suspending_turn
    allowed = 1 if turn is None else turn + 1
    if len(record.first.requests) > allowed:
        yield (
            f"{len(record.first.requests) - allowed} provider request(s) followed a failed waitFor "
            f"(it failed during the tools of turn {allowed}, served by request {allowed})"
        )


@check("susp.request-keys")
def request_keys(record: RunRecord, facts: Facts) -> Iterator[str]:
    seen = 0
    for p, phase in enumerate(record.phases):
        for where, request in surfaced_requests(phase):
            seen += 1
            for v in validate("request", request):
                if v.json_path.startswith("$.data.calls"):
                    continue  # a relay call entry's keys are relay.call-entry-keys' to judge
                yield f"phase {p + 1} {where}{v.json_path[1:]}: {v.message}"
    if not seen:
        raise NotApplicable("no Request was surfaced")


@check("susp.answer-keys")
def answer_keys(record: RunRecord, facts: Facts) -> Iterator[str]:
    sent = [(f"phase {p + 1} waitFor answer {i}", a) for p, ph in enumerate(record.phases) for i, a in enumerate(ph.host.answers)]
    sent += [(f"phase {p + 1} resume answer", ph.params["answer"]) for p, ph in enumerate(record.phases) if "answer" in ph.params]
    if not sent:
        raise NotApplicable("the host sent no Answer")
    for where, answer in sent:
        for v in validate("answer", answer):
            yield f"harness self-check: {where}{v.json_path[1:]}: {v.message}"
    minimal = [where for where, answer in sent if set(answer) == {"id", "ok"}]
    if minimal and not facts.expected_error:
        for p, phase in enumerate(record.phases):
            if phase.error is not None:
                yield f"phase {p + 1} failed ({phase.error.get('kind')}: {phase.error.get('message')}) although the minimal Answer {{id, ok}} must be accepted"


@check("susp.waitfor-concurrent")
def waitfor_concurrent(record: RunRecord, facts: Facts) -> Iterator[str]:
    _in_process(facts)
    widest = max((sum(c.kind == "suspend" for c in turn) for turn in facts.first_turn_calls), default=0)
    if widest < 2:
        raise NotApplicable("no turn has two non-relay suspensions")
    host = record.first.host
    if host.max_outstanding < widest:
        yield f"at most {host.max_outstanding} waitFor callback(s) were outstanding at once; the turn has {widest} suspensions (called one after another)"
    yield from (v for v in host.violations if "outstanding" in v)


@check("susp.not-a-tool-error")
def not_a_tool_error(record: RunRecord, facts: Facts) -> Iterator[str]:
    suspending = {c.name for c in facts.calls.values() if c.kind in {"suspend", "relay"}}
    if not suspending:
        raise NotApplicable("no call suspends")
    events = [m for phase in record.phases for m in phase.metrics if m.get("event") == "tool"]
    marked = [m for m in events if m.get("pending") is True]
    for name in sorted(suspending & {c.name for c in _called(record, facts)}):
        if not any(m.get("tool") == name for m in marked):
            yield f"{name} suspended but none of its tool events carries pending:true ({[m for m in events if m.get('tool') == name]})"
    for m in marked:
        # a missing or renamed isError key is keys.tool-event's failure
        if "isError" in m and m["isError"] is not False:
            yield f"a suspension's tool event has isError {m.get('isError')!r}: {m}"
    for m in events:
        if "pending" in m and m["pending"] is not True:
            yield f"a tool event carries pending {m['pending']!r}; the marker is present only on suspensions: {m}"
    # The retry of an always-suspending tool is the one shipped exception (toolnexus facts
    # A3.4): afterTool runs on the retried result before the loop sees it suspended again.
    retried = {c.id for c, _ in _native_suspending(facts, "alwaysSuspend")} if facts.in_process else set()
    seen: dict[str, int] = {}
    for phase in record.phases:
        for hook in phase.host.hooks:
            event = hook.get("event") or {}
            result: dict[str, Any] = event["result"] if isinstance(event.get("result"), dict) else {}
            if hook.get("name") == "afterTool" and (result.get("pending") or _is_placeholder(record, facts, result.get("output"))):
                # §6 names the hook event's call id `callId`; the reference shim also sends `id`.
                call_id = str(event.get("callId", event.get("id")))
                seen[call_id] = seen.get(call_id, 0) + 1
                if seen[call_id] > (1 if call_id in retried else 0):
                    yield f"afterTool was called with a suspension: {hook}"


def _called(record: RunRecord, facts: Facts) -> list[ScriptedCall]:
    """Scripted calls the provider actually served (a halted or failed run serves fewer turns)."""
    return facts.served_calls(sum(len(p.requests) for p in record.phases))


def _is_placeholder(record: RunRecord, facts: Facts, output: Any) -> bool:
    """Whether an afterTool result is a suspension's own output (its prompt, plus its url line)."""
    requests = [r for c in _called(record, facts) if (r := facts.native_request(c)) is not None]
    outputs = {r["prompt"] for r in requests} | {f"{r['prompt']}\n{r['url']}" for r in requests if "url" in r}
    return isinstance(output, str) and output in outputs


@check("susp.before-tool-raised")
def before_tool_raised(record: RunRecord, facts: Facts) -> Iterator[str]:
    hooked = facts.hook_suspends
    if not hooked:
        raise NotApplicable("no beforeTool hook suspends")
    calls = [c for c in _called(record, facts) if c.name in hooked]
    in_process = facts.in_process
    for call in calls:
        runs = _executions(record, call.id)
        asked = len(_hooks(record, "beforeTool", call))
        if asked != 1:
            yield f"{call.id}: beforeTool was asked {asked} time(s), expected once (not again on the retry)"
        if in_process and [e.get("answered") for e in runs] != [True]:
            yield f"{call.id}: the real tool must run once, with the answer, after a hook-raised suspension (runs: {runs})"
        if not in_process and runs:
            yield f"{call.id}: the real tool ran although the hook suspended it and the run halted"
        if not any(m.get("tool") == call.name and m.get("pending") is True for m in record.first.metrics):
            yield f"{call.id}: the hook-raised suspension emitted no tool event with pending:true"
    if not in_process:
        pending = (record.first.result or {}).get("pending") or {}
        wanted = [r["suspend"]["id"] for r in facts.hook_rules if "suspend" in r]
        if pending.get("id") not in wanted:
            yield f"the run did not halt on the hook's Request (pending {pending!r})"


def _scripted_metadata(facts: Facts) -> dict[str, dict[str, Any]]:
    """Tools whose reply or failure carries scripted metadata, by name."""
    return {name: b["metadata"] for name in facts.tools if "metadata" in (b := facts.behaviour(name))}


@check("susp.pending-marker")
def pending_marker(record: RunRecord, facts: Facts) -> Iterator[str]:
    marked = _scripted_metadata(facts)
    calls = [c for c in _called(record, facts) if c.name in marked]
    if not calls:
        raise NotApplicable("no called tool returns a result with metadata of its own")
    others_suspend = any(c.suspends for c in _called(record, facts))
    asked = [r for p in record.phases for _, r in surfaced_requests(p)]
    stopped = False
    for p, phase in enumerate(record.phases, start=1):
        if phase.error is not None:
            stopped = True
            yield f"phase {p} failed on a result that holds no Request: {phase.error.get('kind')}: {phase.error.get('message')}"
        elif not others_suspend and (phase.result or {}).get("status") == "pending":
            stopped = True
            yield f"phase {p} halted on {(phase.result or {}).get('pending')!r}, which is no Request"
    if not others_suspend and not stopped:
        for request in asked[:1]:
            yield f"no result holds a Request, yet {request!r} was surfaced as one"
    results = final_results(record, facts.style)
    for call in calls:
        expected = facts.expected_real_output(call)
        shown = f"{call.id} ({call.name}, metadata {marked[call.name]!r})"
        if others_suspend and any(r == marked[call.name].get("pending") for r in asked if r is not None):
            yield f"{shown}: its metadata.pending was surfaced as a Request"
        got = results.get(call.id)
        if got is None:
            if not stopped:
                yield f"{shown}: its result never reached the provider"
        elif expected is not None and got.content != expected[0]:
            yield f"{shown}: the provider got {got.content!r}, the tool returned {expected[0]!r}"
        flagged = [m for p in record.phases for m in p.metrics
                   if m.get("event") == "tool" and m.get("tool") == call.name and m.get("pending") is True]
        if flagged:
            shown_event = {k: v for k, v in flagged[0].items() if k != "ms"}  # no timing in a verdict
            yield f"{shown}: its tool event carries pending:true ({shown_event!r})"


def _fixed_request_ids(facts: Facts) -> set[str]:
    """Request ids the scenario itself gives (tools' and hooks' Requests): a port passes them on."""
    fixed = {str(r["suspend"]["id"]) for r in facts.hook_rules if "suspend" in r}
    for name in facts.tools:
        behaviour = facts.behaviour(name)
        fixed |= {str(behaviour[k]["id"]) for k in ("suspend", "alwaysSuspend") if k in behaviour}
    return fixed


@check("susp.request-id-unique")
def request_id_unique(record: RunRecord, facts: Facts) -> Iterator[str]:
    fixed = _fixed_request_ids(facts)
    # One entry per suspension: each waitFor call, each phase's surfaced halt (pending events
    # repeat a Request already counted, so they are not suspensions of their own).
    seen: list[tuple[str, Any]] = []
    for p, phase in enumerate(record.phases, start=1):
        seen += [(f"phase {p} waitFor[{i}]", r.get("id")) for i, r in enumerate(phase.host.wait_for) if isinstance(r, dict)]
        pending = (phase.result or {}).get("pending")
        if isinstance(pending, dict):
            seen.append((f"phase {p} RunResult.pending", pending.get("id")))
    generated = [(where, i) for where, i in seen if i not in fixed]
    if len(generated) < 2:
        raise NotApplicable("fewer than two suspensions with an id the port generates")
    for where, request_id in generated:
        if not isinstance(request_id, str) or not request_id:
            yield f"{where}: the generated Request id is {request_id!r}"
    ids = [i for _, i in generated]
    for request_id in sorted({i for i in ids if isinstance(i, str) and ids.count(i) > 1}):
        yield f"the generated Request id {request_id!r} is shared by {[w for w, i in generated if i == request_id]}"

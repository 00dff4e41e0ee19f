"""Checks for the §10 in-process path and the suspension's observability (SPEC.md susp.*)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..runner import RunRecord
from . import NotApplicable, check
from .model import ScriptedCall, all_scripted_calls, hook_suspends, tools_by_name
from .relay import final_results, surfaced_requests

DECLINED, UNRESOLVED = "declined/expired: ", "unresolved: "


def _in_process(record: RunRecord) -> dict[str, Any]:
    spec = (record.variant.scenario.data.get("host") or {}).get("waitFor")
    if spec is None:
        raise NotApplicable("durable path: no waitFor")
    return spec


def _native_suspending(record: RunRecord, behaviour_key: str) -> list[tuple[ScriptedCall, dict[str, Any]]]:
    tools = tools_by_name(record.variant)
    out = []
    for call in all_scripted_calls(record.variant).values():
        behaviour = tools.get(call.name, {}).get("behaviour", {})
        if behaviour_key in behaviour and call.name not in hook_suspends(record.variant):
            out.append((call, behaviour[behaviour_key]))
    return out


def _answer(spec: dict[str, Any], request_id: str) -> dict[str, Any] | None:
    answers = spec.get("answers", {})
    return answers.get(request_id) or answers.get("*")


def _executions(record: RunRecord, call_id: str) -> list[dict[str, Any]]:
    return [e for e in record.first.executions if e.get("callId") == call_id]


@check("susp.waitfor-retry-once")
def retry_once(record: RunRecord) -> Iterator[str]:
    spec = _in_process(record)
    cases = [(c, r) for c, r in _native_suspending(record, "suspend") if (_answer(spec, r["id"]) or {}).get("ok")]
    if not cases:
        raise NotApplicable("no suspending native tool answered ok")
    for call, _ in cases:
        runs = _executions(record, call.id)
        if [e.get("answered") for e in runs] != [False, True]:
            yield f"{call.id} ran {len(runs)} time(s) (answered: {[e.get('answered') for e in runs]}); expected once, then once more with the answer"
        elif runs[0].get("args") != runs[1].get("args"):
            yield f"{call.id} was retried with other arguments: {runs[0].get('args')!r} -> {runs[1].get('args')!r}"


@check("susp.declined")
def declined(record: RunRecord) -> Iterator[str]:
    spec = _in_process(record)
    cases = [(c, r) for c, r in _native_suspending(record, "suspend") if (_answer(spec, r["id"]) or {}).get("ok") is False]
    if not cases:
        raise NotApplicable("no suspending native tool declined")
    results = final_results(record)
    for call, request in cases:
        if len(_executions(record, call.id)) != 1:
            yield f"{call.id} was re-executed after ok:false"
        yield from _result_is(record, results, call.id, DECLINED + request["prompt"])


@check("susp.unresolved")
def unresolved(record: RunRecord) -> Iterator[str]:
    _in_process(record)
    cases = _native_suspending(record, "alwaysSuspend")
    if not cases:
        raise NotApplicable("no always-suspending tool")
    results = final_results(record)
    for call, request in cases:
        yield from _result_is(record, results, call.id, UNRESOLVED + request["prompt"])


def _result_is(record: RunRecord, results: dict[str, Any], call_id: str, content: str) -> Iterator[str]:
    got = results.get(call_id)
    if got is None:
        yield f"the provider never received a result for {call_id}"
        return
    if got.content != content:
        yield f"result for {call_id} is {got.content!r}, expected {content!r}"
    if record.variant.style == "anthropic" and got.is_error is not True:
        yield f"result for {call_id} has is_error {got.is_error!r}, expected true"


@check("susp.waitfor-error-aborts")
def waitfor_error_aborts(record: RunRecord) -> Iterator[str]:
    if not _in_process(record).get("raise"):
        raise NotApplicable("the host's waitFor does not raise")
    if record.first.error is None:
        yield f"the run did not fail although waitFor raised (status {(record.first.result or {}).get('status')!r})"
    if len(record.first.requests) > 1:
        yield f"{len(record.first.requests) - 1} provider request(s) followed a failed waitFor"


@check("susp.request-keys")
def request_keys(record: RunRecord) -> Iterator[str]:
    from ..schemas import validate

    seen = 0
    for p, phase in enumerate(record.phases):
        for where, request in surfaced_requests(phase):
            seen += 1
            for v in validate("request", request):
                yield f"phase {p + 1} {where}{v.json_path[1:]}: {v.message}"
    if not seen:
        raise NotApplicable("no Request was surfaced")


@check("susp.not-a-tool-error")
def not_a_tool_error(record: RunRecord) -> Iterator[str]:
    suspending = {c.name for c in all_scripted_calls(record.variant).values() if c.kind in {"suspend", "relay"}}
    if not suspending:
        raise NotApplicable("no call suspends")
    events = [m for phase in record.phases for m in phase.metrics if m.get("event") == "tool"]
    marked = [m for m in events if m.get("pending") is True]
    if not marked:
        yield f"no tool event carries pending:true (tool events: {events})"
    for m in marked:
        if m.get("isError") is not False:
            yield f"a suspension's tool event has isError {m.get('isError')!r}: {m}"
    for m in events:
        if "pending" in m and m["pending"] is not True:
            yield f"a tool event carries pending {m['pending']!r}; the marker is present only on suspensions: {m}"
    after = [h for phase in record.phases for h in phase.host.hooks if h.get("name") == "afterTool"]
    for hook in after:
        result = (hook.get("event") or {}).get("result") or {}
        if isinstance(result, dict) and result.get("pending"):
            yield f"afterTool was called with a suspension: {hook}"


@check("susp.before-tool-raised")
def before_tool_raised(record: RunRecord) -> Iterator[str]:
    hooked = hook_suspends(record.variant)
    if not hooked:
        raise NotApplicable("no beforeTool hook suspends")
    calls = [c for c in all_scripted_calls(record.variant).values() if c.name in hooked]
    in_process = "waitFor" in (record.variant.scenario.data.get("host") or {})
    for call in calls:
        runs = _executions(record, call.id)
        if in_process and [e.get("answered") for e in runs] != [True]:
            yield f"{call.id}: the real tool must run once, with the answer, after a hook-raised suspension (runs: {runs})"
        if not in_process and runs:
            yield f"{call.id}: the real tool ran although the hook suspended it and the run halted"
    if not in_process:
        pending = (record.first.result or {}).get("pending") or {}
        wanted = [r["suspend"]["id"] for r in record.variant.scenario.data["host"]["hooks"]["beforeTool"] if "suspend" in r]
        if pending.get("id") not in wanted:
            yield f"the run did not halt on the hook's Request (pending {pending!r})"

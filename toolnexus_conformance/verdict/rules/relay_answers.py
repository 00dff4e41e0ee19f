"""Checks for how relay Answers land in the transcript, and for relay declarations/guard."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.host import Exchange
from toolnexus_conformance.run.runner import RunRecord
from toolnexus_conformance.scenario.declarations import BUILTIN_NAMES, declaration, declared_name

from . import NotApplicable, check
from .relay import final_results

DECLINED = "declined/expired: "


def _declared(record: RunRecord, facts: Facts, name: str) -> dict[str, Any] | None:
    if not record.first.requests:
        return None
    for tool in record.first.requests[0].get("tools") or []:
        if declared_name(tool, facts.style) == name:
            return dict(tool)
    return None


@check("relay.declared-like-any-tool")
def declared_like_any_tool(record: RunRecord, facts: Facts) -> Iterator[str]:
    relay = [t for t in facts.tools.values() if t.get("relay")]
    if not relay:
        raise NotApplicable("no relay tool declared")
    if record.first.error and not record.first.requests:
        raise NotApplicable("the run made no provider request")
    for tool in relay:
        got = _declared(record, facts, tool["name"])
        want = declaration(tool, facts.style)
        if got is None:
            yield f"relay tool {tool['name']!r} is not declared in the first request's tools"
            continue
        for key, value in want.items():
            if key == "function":
                for k, v in value.items():
                    if got.get("function", {}).get(k) != v:
                        yield f"declaration of {tool['name']!r}: function.{k} is {got.get('function', {}).get(k)!r}, expected {v!r}"
            elif got.get(key) != value:
                yield f"declaration of {tool['name']!r}: {key} is {got.get(key)!r}, expected {value!r}"


def answer_exchanges(record: RunRecord) -> list[Exchange]:
    """Every (Request, Answer) pair of the run: the host's waitFor replies, as the host
    logged them, and the Answer a resume passed with its pending Request."""
    found = [e for phase in record.phases for e in phase.host.exchanges if e.answer is not None]
    found += [e for phase in record.phases if (e := phase.resume_exchange) is not None]
    return found


def _answer_for_call(record: RunRecord, call_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(answer, request) that answered a relay call, on either path."""
    for exchange in answer_exchanges(record):
        request = exchange.request if isinstance(exchange.request, dict) else {}
        calls = (request.get("data") or {}).get("calls") or []
        if any(isinstance(e, dict) and e.get("id") == call_id for e in calls) and exchange.answer is not None:
            return exchange.answer, request
    return None


def expected_result(answer: dict[str, Any], request: dict[str, Any], call_id: str) -> tuple[str, bool] | None:
    if not answer.get("ok"):
        return DECLINED + str(request.get("prompt")), True
    data = answer.get("data") or {}
    if isinstance(data.get("results"), list):
        for entry in data["results"]:
            if isinstance(entry, dict) and entry.get("id") == call_id:
                return str(entry.get("output")), bool(entry.get("isError"))
        return None
    calls = (request.get("data") or {}).get("calls") or []
    if "output" in data and len(calls) == 1:
        return str(data["output"]), bool(data.get("isError", False))
    return None


def _relay_outcomes(record: RunRecord, facts: Facts) -> Iterator[tuple[str, tuple[str, bool], Any, dict[str, Any]]]:
    relay_calls = [call for call in facts.calls.values() if call.kind == "relay"]
    results = final_results(record, facts.style) if relay_calls else {}
    for call in relay_calls:
        found = _answer_for_call(record, call.id)
        if found is None:
            continue
        answer, request = found
        expected = expected_result(answer, request, call.id)
        if expected is not None:
            yield call.id, expected, results.get(call.id), answer


def _compare(call_id: str, expected: tuple[str, bool], got: Any, style: str) -> Iterator[str]:
    if got is None:
        yield f"the provider never received a result for relay call {call_id}"
        return
    if got.content != expected[0]:
        yield f"result for relay call {call_id} is {got.content!r}, expected {expected[0]!r}"
    if style == "anthropic" and got.is_error is not expected[1]:
        yield f"result for relay call {call_id} has is_error {got.is_error!r}, expected {expected[1]!r}"


@check("relay.answer-shapes")
def answer_shapes(record: RunRecord, facts: Facts) -> Iterator[str]:
    outcomes = list(_relay_outcomes(record, facts))
    if not outcomes:
        raise NotApplicable("no relay call was answered")
    for call_id, expected, got, _ in outcomes:
        yield from _compare(call_id, expected, got, facts.style)


def _shorthands_on_many(record: RunRecord) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(answer, request) of every Answer that gave the shorthand to a Request with several
    calls, on either path (a waitFor reply or a resume's Answer)."""
    found = []
    for exchange in answer_exchanges(record):
        answer, request = exchange.answer, exchange.request
        if not isinstance(answer, dict) or not isinstance(request, dict):
            continue
        data: dict[str, Any] = answer["data"] if isinstance(answer.get("data"), dict) else {}
        calls = (request.get("data") or {}).get("calls") if isinstance(request.get("data"), dict) else None
        if answer.get("ok") and "output" in data and "results" not in data and isinstance(calls, list) and len(calls) > 1:
            found.append((answer, request))
    return found


@check("relay.shorthand-one-call-only")
def shorthand_one_call_only(record: RunRecord, facts: Facts) -> Iterator[str]:
    shorthand = [o for o in _relay_outcomes(record, facts) if "output" in (o[3].get("data") or {})]
    if not shorthand:
        raise NotApplicable("no shorthand answer to a one-call Request in this scenario")
    results = final_results(record, facts.style)
    for call_id, expected, got, _ in shorthand:
        yield from _compare(call_id, expected, got, facts.style)
        for other in facts.calls.values():
            r = results.get(other.id)
            if other.id != call_id and r is not None and r.content == expected[0]:
                yield f"the shorthand output also landed on call {other.id} ({other.name}); it answers only {call_id}"


@check("relay.shorthand-several-calls")
def shorthand_several_calls(record: RunRecord, facts: Facts) -> Iterator[str]:
    """The reference fills no slot of a several-call Request from a shorthand: each gets the
    missing-result error (a slot with no result at all is resume.one-result-per-call's)."""
    many = _shorthands_on_many(record)
    if not many:
        raise NotApplicable("no shorthand answer to a Request with several calls")
    results = final_results(record, facts.style)
    for answer, request in many:
        calls = [e for e in request["data"]["calls"] if isinstance(e, dict)]
        for entry in calls:
            got = results.get(str(entry.get("id")))
            if got is None:
                continue
            if got.content == answer["data"]["output"]:
                yield (f"the shorthand output landed on {entry.get('id')} although the Request carries {len(calls)} "
                       "calls; the reference fills no slot from it")
            elif facts.style == "anthropic" and got.is_error is not True:
                yield (f"relay call {entry.get('id')} of a several-call Request answered by the shorthand got "
                       f"{got.content!r} without is_error; the reference gives it the missing-result error")


def _continued(record: RunRecord, facts: Facts) -> Iterator[str]:
    last = record.phases[-1]
    status = (last.result or {}).get("status")
    if last.error is not None:
        yield f"the run ended with a port error ({last.error.get('kind')}: {last.error.get('message')})"
    elif status == "pending" and facts.resume_halts_again:
        return  # the run went on, to a call of the resumed turn that suspends again
    elif status != "done":
        yield f"the run did not continue to a final answer (status {status!r})"


@check("relay.caller-failure")
def caller_failure(record: RunRecord, facts: Facts) -> Iterator[str]:
    failing = [o for o in _relay_outcomes(record, facts) if o[1][1] and o[3].get("ok")]
    if not failing:
        raise NotApplicable("no caller-side failure answered")
    for call_id, expected, got, _ in failing:
        yield from _compare(call_id, expected, got, facts.style)
    yield from _continued(record, facts)


@check("relay.declined")
def declined(record: RunRecord, facts: Facts) -> Iterator[str]:
    refused = [o for o in _relay_outcomes(record, facts) if not o[3].get("ok")]
    if not refused:
        raise NotApplicable("no relay Request was declined")
    for call_id, expected, got, _ in refused:
        yield from _compare(call_id, expected, got, facts.style)
    yield from _continued(record, facts)


def _refused(record: RunRecord) -> Iterator[str]:
    refused = record.declaration_error
    if refused is None or refused.get("kind") != "toolkit":
        yield f"toolkit.describe did not refuse the toolkit as kind 'toolkit' (got {refused or record.declarations!r})"
    error = record.first.error
    if error is None or error.get("kind") != "toolkit":
        yield f"client.run did not refuse the toolkit (error: {error!r}); a relay tool named like a builtin must be"
    if record.first.requests:
        yield f"{len(record.first.requests)} provider request(s) were made with a refused toolkit"


def _collides_at_construction(facts: Facts) -> bool:
    return any(t.get("relay") and t["name"] in BUILTIN_NAMES for t in facts.toolkit.get("tools", []))


@check("relay.collision-guard-register")
def collision_guard_register(record: RunRecord, facts: Facts) -> Iterator[str]:
    registered = [t for t in facts.toolkit.get("register") or [] if t.get("relay") and t["name"] in BUILTIN_NAMES]
    if facts.expect.get("error") != "toolkit" or not registered or _collides_at_construction(facts):
        raise NotApplicable("no relay tool named like a builtin arrives by runtime registration alone")
    yield from _refused(record)


@check("relay.collision-guard")
def collision_guard(record: RunRecord, facts: Facts) -> Iterator[str]:
    if facts.expect.get("error") != "toolkit":
        raise NotApplicable("the scenario does not expect a toolkit refusal")
    if not _collides_at_construction(facts):
        raise NotApplicable("the colliding relay tool arrives by runtime registration (relay.collision-guard-register)")
    yield from _refused(record)


@check("relay.non-relay-may-shadow")
def non_relay_may_shadow(record: RunRecord, facts: Facts) -> Iterator[str]:
    shadowing = [t for t in facts.tools.values() if not t.get("relay") and t["name"] in BUILTIN_NAMES]
    if not shadowing:
        raise NotApplicable("no native tool shadows a builtin")
    if record.declaration_error is not None:
        yield f"toolkit.describe refused a native tool shadowing a builtin: {record.declaration_error}"
    if record.first.error is not None:
        yield f"a native tool shadowing a builtin was refused: {record.first.error}"
        return
    for tool in shadowing:
        listed = list(record.first.requests[0].get("tools") or []) if record.first.requests else []
        same = [d for d in listed if declared_name(d, facts.style) == tool["name"]]
        if len(same) > 1:
            yield f"{tool['name']!r} is declared {len(same)} times; the native tool must replace the builtin"
        got = _declared(record, facts, tool["name"])
        want = declaration(tool, facts.style)
        if got is None or got.get("description", got.get("function", {}).get("description")) is None:
            yield f"{tool['name']!r} is not declared"
        elif (got.get("function") or got).get("description") != tool.get("description", ""):
            yield f"{tool['name']!r} is declared as {got!r}; expected the native tool's own declaration {want!r}"

"""Checks for what varies around the loop rather than inside it: what the provider sends
(usage without a usable total, tool-call deltas out of index order, calls of undeclared
tools) and what the host asks for at an edge (``maxTurns`` 0, a resume of a transcript that
is not halted). Each reads the scripted turns' ``wire`` block and the recorded phases.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import PhaseRecord, RunRecord
from toolnexus_conformance.scenario.declarations import BUILTIN_NAMES, declared_name

from . import NotApplicable, check, only_style
from .transcript import tool_turns

UNKNOWN_TOOL_PREFIX = "Unknown tool: "


def served_turns(record: RunRecord, facts: Facts, phase: PhaseRecord) -> list[dict[str, Any]]:
    """The scripted turns this phase's requests were answered with, in order."""
    start = sum(len(p.requests) for p in record.phases[: record.phases.index(phase)])
    return list(facts.turns[start : start + len(phase.requests)])


def _wire(turn: dict[str, Any]) -> dict[str, Any]:
    return turn.get("wire") or {}


def turn_usage(turn: dict[str, Any]) -> tuple[int, int]:
    """(prompt, completion) the turn's response reported; a response without usage, none."""
    if _wire(turn).get("usage") == "absent":
        return 0, 0
    usage = turn.get("usage") or {}
    return usage.get("input", 0), usage.get("output", 0)


def total_is_unusable(facts: Facts, turns: Sequence[dict[str, Any]]) -> bool:
    """True when an OpenAI turn sent no total_tokens or a zero one (loop.usage-total-missing)."""
    return facts.style == "openai" and any(
        _wire(t).get("usage") in {"no-total", "zero-total"} for t in turns
    )


@check("loop.usage-total-missing")
def usage_total_missing(record: RunRecord, facts: Facts) -> Iterator[str]:
    phase = record.first
    turns = served_turns(record, facts, phase)
    if not total_is_unusable(facts, turns):
        raise NotApplicable("no OpenAI turn sent a missing or zero total_tokens")
    usage = (phase.result or {}).get("usage")
    if not isinstance(usage, dict):
        raise NotApplicable("no usage reported")
    want = sum(sum(turn_usage(t)) for t in turns)
    if usage.get("totalTokens") != want:
        yield (
            f"totalTokens is {usage.get('totalTokens')!r}; the reference counts prompt + completion for "
            f"the turns without a usable total_tokens, {want}"
        )


@check("loop.sse-openai-delta-order")
def delta_order(record: RunRecord, facts: Facts) -> Iterator[str]:
    only_style(facts, "openai")
    checked = False
    for phase in (p for p in record.phases if p.entry == "stream"):
        turns = served_turns(record, facts, phase)
        for number, turn in enumerate(turns):
            if _wire(turn).get("toolCallOrder") != "reversed" or len(turn.get("toolCalls", [])) < 2:
                continue
            calls = turn["toolCalls"]
            indexes = _wire(turn).get("toolCallIndexes") or list(range(len(calls)))
            want = [c["id"] for _, c in sorted(zip(indexes, calls, strict=False), key=lambda pair: pair[0])]
            replayed = _replayed_order(phase, number, set(want))
            if replayed is None:
                continue
            checked = True
            if replayed != want:
                yield (f"turn {number + 1}: deltas arrived in reversed index order and the port ordered the calls "
                       f"{replayed}; the reference orders them by index, {want}")
    if not checked:
        raise NotApplicable("no streamed turn sent its tool-call deltas out of index order and was replayed")


def _replayed_order(phase: PhaseRecord, number: int, ids: set[str]) -> list[str] | None:
    if number + 1 >= len(phase.requests):
        return None
    for turn in tool_turns(phase.requests[number + 1].get("messages") or [], "openai"):
        if set(turn.call_ids) == ids:
            return turn.call_ids
    return None


@check("loop.undeclared-tool-call")
def undeclared_tool_call(record: RunRecord, facts: Facts) -> Iterator[str]:
    declared = set(facts.tools)
    checked = False
    for phase in record.phases:
        turns = served_turns(record, facts, phase)
        for number, turn in enumerate(turns):
            strays = [c for c in turn.get("toolCalls", []) if c["name"] not in declared]
            if not strays:
                continue
            if number + 1 >= len(phase.requests) and _stopped_by_the_host(phase, facts):
                continue  # another call of this turn halted the run (or its waitFor raised): no next turn yet
            checked = True
            if number + 1 >= len(phase.requests):
                yield f"turn {number + 1} called {[c['name'] for c in strays]} and the run sent no further request"
                continue
            results = _results_for(phase.requests[number + 1], facts.style)
            for call in strays:
                yield from _unknown_result(call, results.get(call["id"]), facts.style)
                yield from _unknown_event(call, phase)
                ran = [e for e in phase.executions if e.get("callId") == call["id"]]
                if ran:
                    yield f"{call['id']}: the shim executed something for an undeclared tool: {ran}"
    if not checked:
        raise NotApplicable("no served turn calls an undeclared tool")


def _stopped_by_the_host(phase: PhaseRecord, facts: Facts) -> bool:
    """The phase ended pending, or with the error a raising waitFor causes."""
    results = [phase.result, *((e.get("result") or {}) for e in phase.events if e.get("type") == "done")]
    return any((r or {}).get("status") == "pending" for r in results) or (facts.waitfor_raises and phase.error is not None)


def _results_for(body: dict[str, Any], style: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for turn in tool_turns(body.get("messages") or [], style):
        found.update({r.call_id: r for r in turn.results})
    return found


def _unknown_result(call: dict[str, Any], result: Any, style: str) -> Iterator[str]:
    want = UNKNOWN_TOOL_PREFIX + call["name"]
    if result is None:
        yield f"{call['id']} ({call['name']}, undeclared) has no result in the next request"
        return
    if result.content != want:
        yield f"{call['id']}: result {result.content!r}, expected {want!r}"
    if style == "anthropic" and result.is_error is not True:
        yield f"{call['id']}: the result of an undeclared tool must have is_error true"


def _unknown_event(call: dict[str, Any], phase: PhaseRecord) -> Iterator[str]:
    events = [m for m in phase.metrics if m.get("event") == "tool" and m.get("tool") == call["name"]]
    if not events:
        yield f"{call['id']}: no tool event for the undeclared tool {call['name']!r}"
    for event in events:
        if event.get("source") != "custom" or event.get("isError") is not True or event.get("pending"):
            shown = {k: event.get(k) for k in ("source", "isError", "pending")}
            yield f"{call['id']}: tool event {shown}, expected source 'custom', isError true, no pending"


@check("loop.max-turns-zero")
def max_turns_zero(record: RunRecord, facts: Facts) -> Iterator[str]:
    if facts.max_turns != 0:
        raise NotApplicable("maxTurns is not 0")
    phase = record.first
    if phase.requests:
        yield f"maxTurns 0: the port sent {len(phase.requests)} request(s); the reference sends none"
    result = phase.result or {}
    got = {k: result.get(k) for k in ("status", "limit", "text")}
    want = {"status": "incomplete", "limit": "maxTurns", "text": ""}
    if phase.error is not None:
        yield f"maxTurns 0: the port failed ({phase.error.get('kind')}); the reference returns {want}"
    elif got != want:
        yield f"maxTurns 0: the port returned {got}; the reference returns {want}"


@check("resume.not-halted-transcript")
def not_halted_transcript(record: RunRecord, facts: Facts) -> Iterator[str]:
    resumed = record.resumed
    if resumed is None or not facts.resume_replaces_history:
        raise NotApplicable("no resume from a replaced transcript")
    if resumed.error is None or resumed.error.get("kind") != "resume":
        outcome = resumed.error or {k: (resumed.result or {}).get(k) for k in ("status", "text")}
        yield f"{resumed.entry} resumed a transcript that is not halted ({outcome}); the reference refuses it"
    if resumed.requests:
        yield f"{resumed.entry} sent {len(resumed.requests)} request(s) for a transcript that is not halted"


@check("decl.runtime-register")
def runtime_register(record: RunRecord, facts: Facts) -> Iterator[str]:
    toolkit = facts.toolkit
    registered = toolkit.get("register") or []
    if not registered:
        raise NotApplicable("the toolkit registers no tool at runtime")
    if record.declarations is None:
        raise NotApplicable("the port refused the toolkit (judged by relay.collision-guard)")
    built = {t["name"]: t["description"] for t in reversed(toolkit["tools"])}  # first of a name wins
    if toolkit.get("builtins"):
        built.update({name: "" for name in BUILTIN_NAMES if name not in built})
    first = dict(built)
    for tool in registered:
        first.setdefault(tool["name"], tool["description"])
    added = [name for name in first if name not in built]
    declared = [declared_name(d, "openai") for d in record.declarations.get("openai") or []]
    head, tail = declared[: len(declared) - len(added)], declared[len(declared) - len(added) :]
    if len(set(declared)) != len(declared) or tail != added or set(head) != set(built):
        yield (f"declared {declared}; expected the toolkit's own {len(built)} tool(s), then only the newly "
               f"registered ones in order: {added}")
    descriptions = {d["function"]["name"]: d["function"].get("description") for d in record.declarations.get("openai") or []}
    for tool in registered:
        kept = first[tool["name"]]
        if tool["description"] != kept and descriptions.get(tool["name"]) == tool["description"]:
            yield f"registering {tool['name']!r} again replaced the first tool of that name (first must win)"

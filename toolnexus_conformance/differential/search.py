"""Differential runs: generated scenarios, run through two ports, compared observable by observable.

This module owns (a) a hypothesis strategy, :func:`scenarios`, that builds small valid
scenario dicts from one drawn byte string (:func:`scenario_from`, differential/choices.py) (one or two tool turns mixing native behaviours and, as the ports' shared
:class:`Features` allow, relay tools, beforeTool/afterTool hooks, a raising waitFor, and a
durable halt resumed with a drawn Answer, possibly in a restarted shim, and stored
histories; then a final text turn; each turn possibly put on the wire differently, with
provider extras and calling an undeclared tool, see differential/wire.py; tool delays and
histories, differential/draws.py; the contract's error paths, construction guards and hosts
that hold waitFor until N callbacks are out, differential/contract.py) and (b) :func:`differ`, which runs every
variant of one scenario through two shims against the fake provider and returns the
normalized-observable differences, rendered. ``python -m toolnexus_conformance.differential`` searches for
a difference and writes the smallest scenario hypothesis shrinks it to, ready for fixtures;
with ``--expectations`` it skips what the port's expectations explain and searches on
(differential/known.py).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from toolnexus_conformance.differential.backend import BACKEND
from toolnexus_conformance.differential.choices import SPEC, Choices, Region
from toolnexus_conformance.differential.contract import (
    HOST_ANSWER_EXTRAS,
    answer_order,
    apply_construction,
    construction,
    foreign_halted_history,
    foreign_history,
    hold_until,
    relay_results,
    resume_answer_id,
    resume_errors,
    resume_history,
)
from toolnexus_conformance.differential.draws import judged_rules, with_delays, with_store
from toolnexus_conformance.differential.hypothesis_isolation import isolated
from toolnexus_conformance.differential.rules import same_records
from toolnexus_conformance.differential.wire import (
    NON_ASCII_VALUES,
    UNDECLARED_NAME,
    turn_extra,
    turn_wire,
    variation_rules,
    with_undeclared,
)
from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.golden.compare import compare_variant
from toolnexus_conformance.golden.normalize import normalize
from toolnexus_conformance.helpers.json_copy import copy_json
from toolnexus_conformance.helpers.schemas import validate
from toolnexus_conformance.run.facts import facts_for
from toolnexus_conformance.run.observables import observables
from toolnexus_conformance.run.runner import RunRecord, run_variant
from toolnexus_conformance.scenario.model import Scenario, ScenarioError, Variant
from toolnexus_conformance.shim.launchers import port_session
from toolnexus_conformance.shim.ports import ResolvedPort, resolve
from toolnexus_conformance.shim.session import ShimSession

TIMEOUT_S = 10.0
GENERATED_ID = "differential-generated"
NATIVE_NAMES = ("get_time", "count_words", "find_flight")
RELAY_NAMES = ("lookup_weather", "send_invoice")
ARG_KEYS = ("zone", "city", "unit", "text")
Endpoint = str | ResolvedPort | ShimSession
@dataclass(frozen=True)
class Features:
    """What generated scenarios may use; each needs the capability of the same name in both
    ports, or every scenario using it would only show that one port lacks it."""

    relay: bool = False
    resume: bool = False
    hooks: bool = False
    store: bool = False
    register: bool = False
    result_metadata: bool = False  # capability resultMetadata

    @classmethod
    def shared_by(cls, *shims: ShimSession) -> Features:
        caps = [set(shim.ensure_alive().capabilities) for shim in shims]
        return cls(**{field: all(name in c for c in caps) for field, name in _CAPABILITIES.items()})


QUESTION = "question"  # the builtin question tool (susp.question-kind), called where builtins are on
_QUESTION_ARGUMENTS = (
    '{"questions": [{"question": "For how many people?", "options": ["2", "4", "6"]}]}',
    '{"questions": [{"question": "Inside or outside?", "options": ["inside", "outside"]}, {"question": "What time?", "header": "Time"}]}',
)
# What a host answers a question with (its id is generated, so under the fallback key "*").
_QUESTION_ANSWERS = ({"ok": True, "data": {"answers": ["4"]}}, {"ok": True, "data": {"answers": ["inside", "8 pm"]}},
                     {"ok": False, "reason": "declined"})
_CAPABILITIES = {"relay": "relay", "resume": "resume", "hooks": "hooks", "store": "store", "register": "register",
                 "result_metadata": "resultMetadata"}
# Metadata a reply or fail may carry (resultMetadata): host data, a null pending, a pending
# that is no Request; each leaves the result ordinary (susp.pending-marker). None first:
# most results carry none, and a shrink drops it.
_METADATA = (None,) * 9 + ({"cache": "hit"}, {"pending": None}, {"pending": {"status": "queued", "since": "2026-11-30"}})


@functools.cache
def _behaviours(name: str) -> tuple[dict[str, Any], ...]:
    """A native tool's behaviours, as one pick: a reply, a failure, a suspension then a
    reply or the answer's output, a suspension every time (the first plainest)."""
    request = {"id": f"req-{name}", "kind": "approval", "prompt": f"Allow {name}?"}
    reply, fail, always = {"reply": f"{name} ok"}, {"fail": f"{name} broke"}, {"alwaysSuspend": request}
    return (reply, reply, fail, fail, {"suspend": request, "then": {"reply": f"{name} done"}},
            {"suspend": request, "then": {"replyWithAnswerOutput": True}}, always, always)


def _tool(choices: Region, name: str, relay: bool, metadata: Region | None = None) -> dict[str, Any]:
    """A tool of ``name``; ``metadata``: where a native reply or fail picks metadata of its
    own (None: the ports do not share resultMetadata)."""
    tool: dict[str, Any] = {"name": name, "description": f"The {name} tool",
                            "schema": {"type": "object", "properties": {k: {"type": "string"} for k in ARG_KEYS}}}
    if relay:
        tool["relay"] = True
        return tool
    behaviour = tool["behaviour"] = copy_json(choices.pick(_behaviours(name)))
    if metadata is not None and ("reply" in behaviour or "fail" in behaviour):
        extra = metadata.pick(_METADATA)
        if extra is not None:
            behaviour["metadata"] = copy_json(extra)
    return tool


@functools.cache
def _arguments() -> tuple[tuple[str, ...], ...]:
    """JSON objects with keys deliberately out of order and extra whitespace (raw OpenAI
    bytes), by size: every object there can be is listed once, so the pick is a size (each
    as likely), then one object of it; zeros pick the empty object."""
    values = ("Oslo", "C", "one  two", "UTC", *NON_ASCII_VALUES)
    return tuple(tuple(_raw_arguments(dict(zip(keys, chosen, strict=True)))
                       for keys in itertools.combinations(ARG_KEYS, size) for chosen in itertools.product(values, repeat=size))
                 for size in range(4))


def _raw_arguments(args: dict[str, str]) -> str:
    return "{ " + ",  ".join(f'"{k}":  {json.dumps(v, ensure_ascii=False)}' for k, v in sorted(args.items(), reverse=True)) + " }"


def _answer(choices: Region, output: str, relay_call: str | None) -> dict[str, Any]:
    """The host's answer: ok with data, declined with a reason or without one; a relay
    call's also as results (ok, failed, its id twice) or as a failed shorthand."""
    declined: dict[str, Any] = {"ok": False, "reason": "declined"}
    if relay_call is None:
        return copy_json(choices.pick([{"ok": True, "data": {"output": output}}, declined, *HOST_ANSWER_EXTRAS]))
    results = {"ok": True, "data": {"results": [{"id": relay_call, "output": output, "isError": False}]}}
    return copy_json(choices.pick([
        {"ok": True, "data": {"output": output}}, results, declined, *HOST_ANSWER_EXTRAS,
        {"ok": True, "data": {"output": output, "isError": True}},
        *({"ok": True, "data": data} for data in relay_results((relay_call,), output)),
    ]))


def scenario_from(spec: bytes, features: Features, judged: bool) -> dict[str, Any]:
    """The scenario ``spec`` (differential/choices.py) decides: a fresh dict, shared with nothing."""
    choices = Choices(spec)
    shape, toolkit = choices.region("shape"), choices.region("toolkit")
    natives = toolkit.subset(NATIVE_NAMES, 1, 3)
    relays = toolkit.subset(RELAY_NAMES, 0, 2) if features.relay else []
    built = construction(toolkit, natives, relays, relay=features.relay, register=features.register)
    natives, relays = built["natives"], built["relays"]
    behaviours = choices.region("behaviours")
    metadata = choices.region("metadata") if features.result_metadata else None
    tools = [_tool(behaviours, n, False, metadata) for n in natives] + [_tool(behaviours, n, True) for n in relays]
    style = shape.pick(("openai", "anthropic"))
    entry = shape.pick(("run", "stream", "ask"))
    turns: list[dict[str, Any]] = []
    questions = choices.region("question")
    builtins_on = built["builtins"] is True and not built["refused"]
    asked = ghosted = False
    for t in range(shape.integer(1, 2)):
        region = choices.region(f"turn{t}")
        called = region.take(24)
        names = called.some(natives + relays, 1, 4) if tools else [UNDECLARED_NAME]
        asking = questions.take(3)
        # A question and an undeclared call stay apart: loop.undeclared-tool-call's check
        # takes a called builtin for an undeclared tool. Rare: its Request's id is generated,
        # so two runs' records never match and the judge reads both in full (rules.py).
        if builtins_on and not ghosted and asking.chance(1, 8):
            at = asking.integer(0, len(names))
            names = [*names[:at], QUESTION, *names[at:]]
        elif tools and not (asked and builtins_on):
            names = with_undeclared(called, names)
        asked = asked or QUESTION in names
        ghosted = ghosted or UNDECLARED_NAME in names
        calls = [{"id": f"call_{t}_{i}", "name": n,
                  "arguments": asking.pick(_QUESTION_ARGUMENTS) if n == QUESTION else called.pick(called.pick(_arguments()))}
                 for i, n in enumerate(names)]
        turns.append(_with_wire(region, {"toolCalls": calls, "usage": {"input": 10 + t, "output": 5}}, style))
    turns.append(_with_wire(choices.region("final"), {"text": "All done. ☕", "usage": {"input": 30, "output": 7}}, style))
    hooks = _hooks(choices.region("hooks"), natives + relays) if features.hooks and tools else {}
    turns = _order_pinned_where_it_halts(turns, {t["name"]: t for t in tools}, hooks)
    scenario: dict[str, Any] = {
        "id": GENERATED_ID, "title": "A scenario generated by the differential run",
        "rules": ["relay.alongside-real-tools" if relays else "absent.byte-identical", *variation_rules(turns)],
        "styles": [style], "entries": [entry], "requires": _requires(relays, hooks),
        "relayFree": not relays, "toolkit": {"tools": tools}, "prompt": "Please use the tools.", "turns": turns,
    }
    # Each cited only where its check reads the generated shape right (a check judges any
    # scenario for reach, cited or not): the question where it is the first suspension (an
    # earlier one halts the run before its Request surfaces), metadata where nothing suspends
    # (a halt keeps the result from the provider).
    first = _first_suspending(turns, {t["name"]: t for t in tools}, hooks)
    if first is not None and first[1][0]["name"] == QUESTION:
        scenario["rules"] += ["susp.question-kind", "susp.question-output-format"]
    if any("metadata" in t.get("behaviour", {}) for t in tools):
        scenario["requires"] = sorted({*scenario["requires"], "resultMetadata"})
        scenario["rules"] += ["susp.pending-marker"] if first is None else []
    if built["client"]:
        scenario["client"] = built["client"]
        scenario["rules"] += built["client_rules"]
    apply_construction(scenario, built)
    host: dict[str, Any] = {"hooks": hooks} if hooks else {}
    raising = False
    hosting = choices.region("host")
    if built["refused"]:  # the toolkit is refused: no run, no host to answer
        pass
    elif hosting.chance(1, 2):  # in-process: the host answers every suspension itself
        host["waitFor"] = {"answers": _answers(hosting.take(16), tools, turns)}
        if any(c["name"] == QUESTION for turn in turns for c in turn.get("toolCalls", [])):
            host["waitFor"]["answers"]["*"] = copy_json(questions.pick(_QUESTION_ANSWERS))
        # A raise aborts the run mid-turn: whatever else that turn does (a second suspension
        # reaching waitFor, another call's afterTool hook or reply) races the abort, so it
        # happens or not by timing, not behaviour (measured: a ghost_tool's afterTool seen in
        # one run and not the other under load). So a raise only where that turn has one call.
        first = _first_suspending(turns, {t["name"]: t for t in tools}, hooks)
        raising = first is not None and len(turns[first[0]]["toolCalls"]) == 1 and hosting.chance(1, 3)
        if raising:
            host["waitFor"]["raise"] = True
            scenario["expect"] = {"error": "run"}  # so a check calls the abort expected, not a port error
        elif first is not None and all(c["name"] != QUESTION for c in first[1]):  # a hold orders answers by key
            hold = hold_until(hosting, len(first[1]))
            if hold is not None:
                host["waitFor"]["holdUntil"] = hold
                scenario["rules"] += ["relay.inprocess-one-callback-per-call"] if relays else []
                order = answer_order(hosting, tuple(_answer_key(c, {t["name"]: t for t in tools}, hooks) for c in first[1]))
                if order is not None:
                    host["waitFor"]["answerOrder"] = order
    elif features.resume and hosting.chance(1, 2):
        _add_resume(hosting, scenario, hooks)
    else:
        _add_rerun(hosting, scenario, hooks)
    scenario["rules"] += [] if raising else with_delays(choices.region("delays"), tools)
    if host:
        scenario["host"] = host
    if features.store and not built["refused"]:
        store = choices.region("store")
        scenario["rules"] += with_store(store, scenario, entry)
        if "storedHistory" in scenario:
            scenario["storedHistory"], cited = foreign_history(store, style, scenario["storedHistory"], natives)
            scenario["rules"] += cited
    scenario["rules"] = list(dict.fromkeys([*scenario["rules"], *(judged_rules(scenario) if judged else [])]))
    return scenario


def _with_wire(region: Region, turn: dict[str, Any], style: str) -> dict[str, Any]:
    """``turn`` with the wire and extra blocks the next 24 bytes of ``region`` decide."""
    wire = turn_wire(region.take(22), len(turn.get("toolCalls", [])), style)
    extra = turn_extra(region.take(2), style)
    return {**turn, **({"wire": wire} if wire else {}), **({"extra": extra} if extra else {})}


def _order_pinned_where_it_halts(turns: list[dict[str, Any]], tools: dict[str, dict[str, Any]],
                                 hooks: dict[str, Any]) -> list[dict[str, Any]]:
    """Reversed deltas stay off turns with a suspending call: their order is unpinned
    (loop.sse-openai-delta-order, advisory), so which call comes after the halted one would be too."""
    out = []
    for turn in turns:
        wire = turn.get("wire") or {}
        if wire.get("toolCallOrder") == "reversed" and any(_suspends(c, tools, hooks) for c in turn.get("toolCalls", [])):
            rest = {k: v for k, v in wire.items() if k != "toolCallOrder"}
            turn = {k: v for k, v in turn.items() if k != "wire"} | ({"wire": rest} if rest else {})
        out.append(turn)
    return out


def _hooks(choices: Region, names: list[str]) -> dict[str, Any]:
    """No hooks (one time in two), or beforeTool rules (an args rewrite or a suspension, on
    up to two distinct tools) and/or afterTool observation."""
    if not choices.chance(1, 2):
        return {}
    before = [_hook_rule(choices, name) for name in choices.subset(names, 0, 2)]
    after = choices.chance(1, 2)
    return {**({"beforeTool": before} if before else {}), **({"afterTool": "observe"} if after else {})}


def _hook_rule(choices: Region, name: str) -> dict[str, Any]:
    if not choices.chance(1, 2):
        return {"tool": name, "args": {"zone": "rewritten", "text": "by the hook"}}
    return {"tool": name, "suspend": {"id": f"req-hook-{name}", "kind": "approval", "prompt": f"Hook asks about {name}"}}


def _suspends(call: dict[str, Any], tools: dict[str, dict[str, Any]], hooks: dict[str, Any]) -> bool:
    if call["name"] == QUESTION:  # only ever called where builtins are on: it asks first
        return True
    tool = tools.get(call["name"])
    if tool is None:  # an undeclared tool never runs, so never suspends
        return False
    hooked = any(r["tool"] == call["name"] and "suspend" in r for r in hooks.get("beforeTool", []))
    behaviour = tool.get("behaviour", {})
    return hooked or tool.get("relay", False) or "suspend" in behaviour or "alwaysSuspend" in behaviour


def _answer_key(call: dict[str, Any], tools: dict[str, dict[str, Any]], hooks: dict[str, Any]) -> str:
    """The host's answer key of a suspending call's first waitFor (toolnexus_conformance/run/host.py): its
    beforeTool suspension's Request id, its relay call, or its tool's Request id."""
    for rule in hooks.get("beforeTool", []):
        if rule["tool"] == call["name"] and "suspend" in rule:
            return str(rule["suspend"]["id"])
    tool = tools[call["name"]]
    if tool.get("relay"):
        return f"call:{call['id']}"
    behaviour = tool["behaviour"]
    return str((behaviour.get("suspend") or behaviour["alwaysSuspend"])["id"])


def _first_suspending(turns: list[dict[str, Any]], tools: dict[str, dict[str, Any]],
                      hooks: dict[str, Any]) -> tuple[int, list[dict[str, Any]]] | None:
    """The first turn with a suspending call, and that turn's suspending calls."""
    for index, turn in enumerate(turns):
        calls = [c for c in turn.get("toolCalls", []) if _suspends(c, tools, hooks)]
        if calls:
            return index, calls
    return None


def _add_resume(choices: Region, scenario: dict[str, Any], hooks: dict[str, Any]) -> None:
    """A durable run halts at the first turn with a suspending call: resume it with a drawn
    Answer (shorthand, results for some of that turn's calls, or declined), the rest of the
    script becoming the resumed phase's turns. A scenario that never halts gets no resume."""
    turns = scenario["turns"]
    first = _first_suspending(turns, {t["name"]: t for t in scenario["toolkit"]["tools"]}, hooks)
    if first is None:
        return
    halted = first[0]
    answered = choices.take(6).subset([c["id"] for c in turns[halted]["toolCalls"]], 0, 5)
    answer = copy_json(choices.pick(_resume_answer(tuple(answered))))
    resume: dict[str, Any] = {"answer": answer, "turns": turns[halted + 1:]}
    if choices.chance(1, 3):
        resume["restartShim"] = True
    scenario["turns"] = turns[: halted + 1]
    scenario["resume"] = resume
    scenario["requires"] = sorted({*scenario["requires"], "resume"})
    scenario["rules"].append("resume.entry-points")
    if _first_suspending(resume["turns"], {t["name"]: t for t in scenario["toolkit"]["tools"]}, hooks) is not None:
        scenario["expect"] = {"status": "pending", "resumedStatus": "pending"}  # it halts again
        scenario["rules"].append("resume.may-halt-again")
    names = [t["name"] for t in scenario["toolkit"]["tools"]]
    id_kind, history_kind = resume_errors(choices)
    answer["id"], refused = resume_answer_id(id_kind, first[1][0]["name"], names)
    if refused:
        scenario["rules"].append("resume.answer-id-must-match")
    history, rule = resume_history(history_kind, scenario["styles"][0], scenario["prompt"], turns[halted])
    if history is not None:
        resume["history"] = history
        scenario["rules"].append(rule)
        refused = True
    elif history_kind == "foreign":
        placeholder = _native_placeholder(scenario, halted, first[1][0], hooks)
        if placeholder is not None:
            resume["history"] = foreign_halted_history(scenario["styles"][0], scenario["prompt"], turns[halted], placeholder)
            scenario["rules"].append("loop.assistant-extra-keys")
    if refused:  # refused with no provider call: nothing left to serve
        resume["turns"], resume["expectError"] = [], "resume"
        resume.pop("restartShim", None)
        scenario["expect"] = {"status": "pending", "error": "resume"}


def _add_rerun(choices: Region, scenario: dict[str, Any], hooks: dict[str, Any]) -> None:
    """A durable run halts at the first turn with a suspending call: the host runs again
    with the halted transcript and a new prompt (upstream §10 rule 2, every port's resume), the
    rest of the script becoming the second run's turns. Drawn only where the halted call is
    its turn's last, so the halted transcript leaves no call unanswered that the provider
    would refuse; a scenario that never halts gets no second run."""
    turns = scenario["turns"]
    first = _first_suspending(turns, {t["name"]: t for t in scenario["toolkit"]["tools"]}, hooks)
    if first is None or turns[first[0]]["toolCalls"][-1]["id"] != first[1][0]["id"] or not choices.chance(1, 2):
        return
    halted = first[0]
    rerun: dict[str, Any] = {"prompt": "Done on my side; please go on.", "turns": turns[halted + 1:] or [{"text": "All set."}]}
    if choices.chance(1, 3):
        rerun["restartShim"] = True
    scenario["turns"] = turns[: halted + 1]
    scenario["rerun"] = rerun
    scenario["rules"].append("resume.rerun-with-transcript")
    if _first_suspending(rerun["turns"], {t["name"]: t for t in scenario["toolkit"]["tools"]}, hooks) is not None:
        scenario["expect"] = {"status": "pending", "resumedStatus": "pending"}  # it halts again


def _native_placeholder(scenario: dict[str, Any], halted: int, call: dict[str, Any], hooks: dict[str, Any]) -> str | None:
    """The placeholder a run halted on ``call`` writes, where a halted transcript
    :func:`foreign_halted_history` writes can stand for the run's: the halted call is its
    turn's first (no earlier result to write), a native or hook suspension (a relay Request's
    prompt wording is unpinned, relay.prompt-text)."""
    if scenario["turns"][halted]["toolCalls"][0]["id"] != call["id"]:
        return None
    for rule in hooks.get("beforeTool", []):
        if rule["tool"] == call["name"] and "suspend" in rule:
            return str(rule["suspend"]["prompt"])
    tool = next((t for t in scenario["toolkit"]["tools"] if t["name"] == call["name"]), None)
    if tool is None or tool.get("relay"):  # a builtin question's prompt is the port's rendering
        return None
    behaviour = tool["behaviour"]
    return str((behaviour.get("suspend") or behaviour["alwaysSuspend"])["prompt"])


@functools.cache
def _resume_answer(answered: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    """The resume's Answer: the shorthand (ok or failed), results for ``answered`` (ok, one
    failed, one named twice), declined with a reason or without one."""
    return (
        {"id": "$pending.id", "ok": True, "data": {"output": "resumed by the caller"}},
        {"id": "$pending.id", "ok": True,
         "data": {"results": [{"id": c, "output": f"caller result for {c}", "isError": False} for c in answered]}},
        {"id": "$pending.id", "ok": False, "reason": "the caller declined"},
        *({"id": "$pending.id", **extra} for extra in HOST_ANSWER_EXTRAS),
        {"id": "$pending.id", "ok": True, "data": {"output": "the caller's run failed", "isError": True}},
        *({"id": "$pending.id", "ok": True, "data": data} for data in relay_results(answered, "caller result")),
    )


def _answers(choices: Region, tools: list[dict[str, Any]], turns: list[dict[str, Any]]) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    for tool in tools:
        behaviour = tool.get("behaviour", {})
        request = behaviour.get("suspend") or behaviour.get("alwaysSuspend")
        if request is not None:
            answers[request["id"]] = _answer(choices, f"answer for {tool['name']}", None)
    relay_names = {t["name"] for t in tools if t.get("relay")}
    for turn in turns:
        for call in turn.get("toolCalls", []):
            if call["name"] in relay_names:
                answers[f"call:{call['id']}"] = _answer(choices, f"caller ran {call['name']}", call["id"])
    return answers


def _requires(relays: list[str], hooks: dict[str, Any]) -> list[str]:
    # style, stream, store and resume follow from the variant; only the extras are listed
    return (["relay"] if relays else []) + (["hooks"] if hooks else [])


def scenarios(features: Features = Features(), *, judged: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    """Valid scenario dicts using only ``features`` beyond plain native tools; ``judged``:
    citing every rule whose check can judge them (differential_draws.judged_rules). Drawn
    without hypothesis's local-module constants (hypothesis_isolation), so a seed alone
    decides the stream."""
    return isolated(SPEC).map(functools.partial(scenario_from, features=features, judged=judged))


def canonical(data: dict[str, Any]) -> bytes:
    """The scenario's canonical JSON (sorted keys): what its digest and identity hash."""
    return json.dumps(data, sort_keys=True).encode()


def as_scenario(data: dict[str, Any], canonical_json: bytes | None = None) -> Scenario:
    """``canonical_json``: :func:`canonical` of ``data``, when the caller made it already."""
    violations = validate("scenario", data)
    if violations:
        raise ScenarioError(f"generated scenario is invalid: {violations[0].json_path}: {violations[0].message}")
    digest = hashlib.sha256(canonical(data) if canonical_json is None else canonical_json).hexdigest()[:16]
    return Scenario(path=Path(f"{data['id']}.json"), data=data, digest=digest)


def differ(port_a: Endpoint, port_b: Endpoint, scenario: dict[str, Any], *,
           provider: FakeProvider | None = None) -> list[str]:
    """Every variant of ``scenario`` through both ports; the rendered failures (``port_a`` = expected)."""
    with ExitStack() as stack:
        shim_a, shim_b = shim_for(port_a, stack), shim_for(port_b, stack)
        if provider is None:
            provider = FakeProvider().start()
            stack.callback(provider.stop)
        failures: list[str] = []
        for variant in as_scenario(scenario).variants():
            if variant.uncalled_relay:
                continue
            facts = facts_for(variant)  # the same for both runs: derived once
            expected, actual = (run_variant(variant, shim, provider, timeout=TIMEOUT_S, facts=facts, declarations=False)
                                for shim in (shim_a, shim_b))
            # records the same wherever a check reads have the same observables
            failures += [] if same_records(expected, actual) else variant_failures(variant, expected, actual)
        return failures


def variant_failures(variant: Variant, expected: RunRecord, actual: RunRecord) -> list[str]:
    """How ``actual``'s normalized observables differ from ``expected``'s (the golden side), rendered."""
    comparison = compare_variant(normalize(observables(expected)), normalize(observables(actual)), variant)
    return [f"{variant.name}:{difference.render()}" for difference in comparison.failures]


def shim_for(port: Endpoint, stack: ExitStack) -> ShimSession:
    """``port``'s shim session, started (and stopped by ``stack``) unless it is one already."""
    if isinstance(port, ShimSession):
        return port
    resolved = resolve(port, None, None, None) if isinstance(port, str) else port
    env = {**os.environ, **resolved.env} if resolved.env else None  # a port's env adds to ours
    session = stack.enter_context(port_session(resolved, env=env, keep_transcript=False))
    session.ensure_alive()
    return session


def search_settings(examples: int) -> settings:
    """Every search's settings: derandomized, on the generate-only backend (differential/backend.py)."""
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None, backend=BACKEND,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def minimal_difference(port_a: Endpoint, port_b: Endpoint, *, features: Features, examples: int,
                       provider: FakeProvider | None = None) -> dict[str, Any] | None:
    """The smallest generated scenario on which the ports differ, or None if none was found."""
    seen: dict[bytes, bool] = {}  # by canonical JSON: a shrink meets one scenario from many byte strings

    def differs(scenario: dict[str, Any]) -> bool:
        key = canonical(scenario)
        if key not in seen:
            seen[key] = bool(differ(port_a, port_b, scenario, provider=provider))
        return seen[key]

    try:
        return find(scenarios(features), differs, settings=search_settings(examples))
    except NoSuchExample:
        return None


def fixture_from(scenario: dict[str, Any], port: str, against: str) -> dict[str, Any]:
    """The scenario renamed after its content, so a maintainer can drop it into fixtures/scenarios/."""
    data = {k: v for k, v in scenario.items() if k != "id"}
    suffix = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:8]
    title = f"Minimal difference found by a differential run of {port} against {against}"
    return {"id": f"diff-{suffix}", **data, "title": title}


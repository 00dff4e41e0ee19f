"""Differential runs: generated scenarios, run through two ports, compared observable by observable.

This module owns (a) a hypothesis strategy, :func:`scenarios`, that builds small valid
scenario dicts (one or two tool turns mixing native behaviours and, as the ports' shared
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
    BOOLEANS,
    NON_ASCII_VALUES,
    ONE_IN_THREE,
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
# Built once, like the cached factories below (see their comment).
_NATIVES = st.lists(st.sampled_from(NATIVE_NAMES), min_size=1, max_size=3, unique=True)
_RELAYS = st.lists(st.sampled_from(RELAY_NAMES), max_size=2, unique=True)
_STYLE = st.sampled_from(["openai", "anthropic"])
_ENTRY = st.sampled_from(["run", "stream", "ask"])
_TOOL_TURNS = st.integers(1, 2)


@dataclass(frozen=True)
class Features:
    """What generated scenarios may use; each needs the capability of the same name in both
    ports, or every scenario using it would only show that one port lacks it."""

    relay: bool = False
    resume: bool = False
    hooks: bool = False
    store: bool = False
    register: bool = False

    @classmethod
    def shared_by(cls, *shims: ShimSession) -> Features:
        caps = [set(shim.ensure_alive().capabilities) for shim in shims]
        return cls(**{name: all(name in c for c in caps) for name in ("relay", "resume", "hooks", "store", "register")})


# Strategy factories are cached: hypothesis validates a strategy object the first time it
# draws from it, so a fresh one per draw cost ~40% of generating a scenario. A cached
# strategy draws exactly what a fresh one would (tests/test_hypothesis_isolation.py proves
# the stream unchanged by whatever was drawn or imported before).
@functools.cache
def _behaviour(name: str) -> st.SearchStrategy[dict[str, Any]]:
    request = {"id": f"req-{name}", "kind": "approval", "prompt": f"Allow {name}?"}
    return st.one_of(
        st.just({"reply": f"{name} ok"}),
        st.just({"fail": f"{name} broke"}),
        st.sampled_from([{"reply": f"{name} done"}, {"replyWithAnswerOutput": True}]).map(
            lambda then: {"suspend": dict(request), "then": then}
        ),
        st.just({"alwaysSuspend": dict(request)}),
    )


@functools.cache
def _tool(name: str, relay: bool) -> st.SearchStrategy[dict[str, Any]]:
    base = {"name": name, "description": f"The {name} tool",
            "schema": {"type": "object", "properties": {k: {"type": "string"} for k in ARG_KEYS}}}
    if relay:
        return st.just({**base, "relay": True})
    return _behaviour(name).map(lambda behaviour: {**base, "behaviour": behaviour})


@functools.cache
def _arguments() -> st.SearchStrategy[str]:
    """A JSON object with keys deliberately out of order and extra whitespace (raw OpenAI bytes).

    Every object there can be is listed once, by size: the draw is a size (each as likely),
    then one object of it, and shrinks to the empty object. A dictionary strategy drew the
    same objects key by key, ~7 draws of a call's arguments against 2 (a quarter of a
    scenario's draws, measured), for much the same mix of sizes."""
    values = ("Oslo", "C", "one  two", "UTC", *NON_ASCII_VALUES)
    by_size = [[_raw_arguments(dict(zip(keys, chosen, strict=True)))
                for keys in itertools.combinations(ARG_KEYS, size) for chosen in itertools.product(values, repeat=size)]
               for size in range(4)]
    return st.one_of(*(st.sampled_from(objects) for objects in by_size))


def _raw_arguments(args: dict[str, str]) -> str:
    return "{ " + ",  ".join(f'"{k}":  {json.dumps(v, ensure_ascii=False)}' for k, v in sorted(args.items(), reverse=True)) + " }"


@functools.cache
def _answer(output: str, relay_call: str | None) -> st.SearchStrategy[dict[str, Any]]:
    """The host's answer: ok with data, declined with a reason or without one; a relay
    call's also as results (ok, failed, its id twice) or as a failed shorthand."""
    declined: dict[str, Any] = {"ok": False, "reason": "declined"}
    if relay_call is None:
        return st.sampled_from([{"ok": True, "data": {"output": output}}, declined, *HOST_ANSWER_EXTRAS])
    results = {"ok": True, "data": {"results": [{"id": relay_call, "output": output, "isError": False}]}}
    return st.sampled_from([
        {"ok": True, "data": {"output": output}}, results, declined, *HOST_ANSWER_EXTRAS,
        {"ok": True, "data": {"output": output, "isError": True}},
        *({"ok": True, "data": data} for data in relay_results((relay_call,), output)),
    ])


@st.composite
def _scenario(draw: st.DrawFn, features: Features, judged: bool) -> dict[str, Any]:
    natives = draw(_NATIVES)
    relays = draw(_RELAYS) if features.relay else []
    built = construction(draw, natives, relays, relay=features.relay, register=features.register)
    natives, relays = built["natives"], built["relays"]
    tools = [draw(_tool(n, False)) for n in natives] + [draw(_tool(n, True)) for n in relays]
    style = draw(_STYLE)
    entry = draw(_ENTRY)
    turns: list[dict[str, Any]] = []
    for t in range(draw(_TOOL_TURNS)):
        names = with_undeclared(draw, draw(_called(tuple(natives + relays)))) if tools else [UNDECLARED_NAME]
        calls = [{"id": f"call_{t}_{i}", "name": n, "arguments": draw(_arguments())} for i, n in enumerate(names)]
        turns.append(_with_wire(draw, {"toolCalls": calls, "usage": {"input": 10 + t, "output": 5}}, style))
    turns.append(_with_wire(draw, {"text": "All done. ☕", "usage": {"input": 30, "output": 7}}, style))
    hooks = draw(_hooks(tuple(natives + relays))) if features.hooks and tools else {}
    turns = _order_pinned_where_it_halts(turns, {t["name"]: t for t in tools}, hooks)
    scenario: dict[str, Any] = {
        "id": GENERATED_ID, "title": "A scenario generated by the differential run",
        "rules": ["relay.alongside-real-tools" if relays else "absent.byte-identical", *variation_rules(turns)],
        "styles": [style], "entries": [entry], "requires": _requires(relays, hooks),
        "relayFree": not relays, "toolkit": {"tools": tools}, "prompt": "Please use the tools.", "turns": turns,
    }
    if built["client"]:
        scenario["client"] = built["client"]
        scenario["rules"] += built["client_rules"]
    apply_construction(scenario, built)
    host: dict[str, Any] = {"hooks": hooks} if hooks else {}
    raising = False
    if built["refused"]:  # the toolkit is refused: no run, no host to answer
        pass
    elif draw(BOOLEANS):  # in-process: the host answers every suspension itself
        host["waitFor"] = {"answers": _answers(draw, tools, turns)}
        # A raise aborts the run mid-turn: whatever else that turn does (a second suspension
        # reaching waitFor, another call's afterTool hook or reply) races the abort, so it
        # happens or not by timing, not behaviour (measured: a ghost_tool's afterTool seen in
        # one run and not the other under load). So a raise only where that turn has one
        # call; drawn as before where it has more, so the stream of draws stays the same.
        first = _first_suspending(turns, {t["name"]: t for t in tools}, hooks)
        raising = first is not None and len(first[1]) == 1 and draw(ONE_IN_THREE)
        if raising and first is not None and len(turns[first[0]]["toolCalls"]) == 1:
            host["waitFor"]["raise"] = True
            scenario["expect"] = {"error": "run"}  # so a check calls the abort expected, not a port error
        elif first is not None:
            hold = hold_until(draw, len(first[1]))
            if hold is not None:
                host["waitFor"]["holdUntil"] = hold
                scenario["rules"] += ["relay.inprocess-one-callback-per-call"] if relays else []
                order = answer_order(draw, tuple(_answer_key(c, {t["name"]: t for t in tools}, hooks) for c in first[1]))
                if order is not None:
                    host["waitFor"]["answerOrder"] = order
    elif features.resume and draw(BOOLEANS):
        _add_resume(draw, scenario, hooks)
    else:
        _add_rerun(draw, scenario, hooks)
    scenario["rules"] += [] if raising else with_delays(draw, tools)
    if host:
        scenario["host"] = host
    if features.store and not built["refused"]:
        scenario["rules"] += with_store(draw, scenario, entry)
        if "storedHistory" in scenario:
            scenario["storedHistory"], cited = foreign_history(draw, style, scenario["storedHistory"], natives)
            scenario["rules"] += cited
    scenario["rules"] = list(dict.fromkeys([*scenario["rules"], *(judged_rules(scenario) if judged else [])]))
    # The cached strategies hand out the same dict objects to every draw: a copy keeps a
    # consumer that edits one scenario from editing what later scenarios are drawn from.
    return copy_json(scenario)


def _with_wire(draw: st.DrawFn, turn: dict[str, Any], style: str) -> dict[str, Any]:
    wire = draw(turn_wire(len(turn.get("toolCalls", [])), style))
    extra = draw(turn_extra(style))
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


@functools.cache
def _called(names: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(names), min_size=1, max_size=4)


@functools.cache
def _hooks(names: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    """No hooks, or beforeTool rules (an args rewrite or a suspension) and/or afterTool observation."""
    rule: st.SearchStrategy[dict[str, Any]] = st.sampled_from(names).flatmap(_hook_rule)
    before = st.lists(rule, max_size=2, unique_by=lambda r: r["tool"])
    return st.one_of(
        st.just({}),
        st.tuples(before, BOOLEANS).map(
            lambda drawn: {**({"beforeTool": drawn[0]} if drawn[0] else {}), **({"afterTool": "observe"} if drawn[1] else {})}
        ),
    )


@functools.cache
def _hook_rule(name: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.sampled_from([
        {"tool": name, "args": {"zone": "rewritten", "text": "by the hook"}},
        {"tool": name, "suspend": {"id": f"req-hook-{name}", "kind": "approval", "prompt": f"Hook asks about {name}"}},
    ])


def _suspends(call: dict[str, Any], tools: dict[str, dict[str, Any]], hooks: dict[str, Any]) -> bool:
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


def _add_resume(draw: st.DrawFn, scenario: dict[str, Any], hooks: dict[str, Any]) -> None:
    """A durable run halts at the first turn with a suspending call: resume it with a drawn
    Answer (shorthand, results for some of that turn's calls, or declined), the rest of the
    script becoming the resumed phase's turns. A scenario that never halts gets no resume."""
    turns = scenario["turns"]
    first = _first_suspending(turns, {t["name"]: t for t in scenario["toolkit"]["tools"]}, hooks)
    if first is None:
        return
    halted = first[0]
    answered = draw(_answered(tuple(c["id"] for c in turns[halted]["toolCalls"])))
    answer = copy_json(draw(_resume_answer(tuple(answered))))
    resume: dict[str, Any] = {"answer": answer, "turns": turns[halted + 1:]}
    if draw(ONE_IN_THREE):
        resume["restartShim"] = True
    scenario["turns"] = turns[: halted + 1]
    scenario["resume"] = resume
    scenario["requires"] = sorted({*scenario["requires"], "resume"})
    scenario["rules"].append("resume.entry-points")
    if _first_suspending(resume["turns"], {t["name"]: t for t in scenario["toolkit"]["tools"]}, hooks) is not None:
        scenario["expect"] = {"status": "pending", "resumedStatus": "pending"}  # it halts again
        scenario["rules"].append("resume.may-halt-again")
    names = [t["name"] for t in scenario["toolkit"]["tools"]]
    id_kind, history_kind = resume_errors(draw)
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


def _add_rerun(draw: st.DrawFn, scenario: dict[str, Any], hooks: dict[str, Any]) -> None:
    """A durable run halts at the first turn with a suspending call: the host runs again
    with the halted transcript and a new prompt (upstream §10 rule 2, every port's resume), the
    rest of the script becoming the second run's turns. Drawn only where the halted call is
    its turn's last, so the halted transcript leaves no call unanswered that the provider
    would refuse; a scenario that never halts gets no second run."""
    turns = scenario["turns"]
    first = _first_suspending(turns, {t["name"]: t for t in scenario["toolkit"]["tools"]}, hooks)
    if first is None or turns[first[0]]["toolCalls"][-1]["id"] != first[1][0]["id"] or not draw(BOOLEANS):
        return
    halted = first[0]
    rerun: dict[str, Any] = {"prompt": "Done on my side; please go on.", "turns": turns[halted + 1:] or [{"text": "All set."}]}
    if draw(ONE_IN_THREE):
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
    tool = next(t for t in scenario["toolkit"]["tools"] if t["name"] == call["name"])
    if tool.get("relay"):
        return None
    behaviour = tool["behaviour"]
    return str((behaviour.get("suspend") or behaviour["alwaysSuspend"])["prompt"])


@functools.cache
def _answered(call_ids: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(call_ids), max_size=len(call_ids), unique=True)


@functools.cache
def _resume_answer(answered: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    """The resume's Answer: the shorthand (ok or failed), results for ``answered`` (ok, one
    failed, one named twice), declined with a reason or without one."""
    return st.sampled_from([
        {"id": "$pending.id", "ok": True, "data": {"output": "resumed by the caller"}},
        {"id": "$pending.id", "ok": True,
         "data": {"results": [{"id": c, "output": f"caller result for {c}", "isError": False} for c in answered]}},
        {"id": "$pending.id", "ok": False, "reason": "the caller declined"},
        *({"id": "$pending.id", **extra} for extra in HOST_ANSWER_EXTRAS),
        {"id": "$pending.id", "ok": True, "data": {"output": "the caller's run failed", "isError": True}},
        *({"id": "$pending.id", "ok": True, "data": data} for data in relay_results(answered, "caller result")),
    ])


def _answers(draw: st.DrawFn, tools: list[dict[str, Any]], turns: list[dict[str, Any]]) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    for tool in tools:
        behaviour = tool.get("behaviour", {})
        request = behaviour.get("suspend") or behaviour.get("alwaysSuspend")
        if request is not None:
            answers[request["id"]] = draw(_answer(f"answer for {tool['name']}", None))
    relay_names = {t["name"] for t in tools if t.get("relay")}
    for turn in turns:
        for call in turn.get("toolCalls", []):
            if call["name"] in relay_names:
                answers[f"call:{call['id']}"] = draw(_answer(f"caller ran {call['name']}", call["id"]))
    return answers


def _requires(relays: list[str], hooks: dict[str, Any]) -> list[str]:
    # style, stream, store and resume follow from the variant; only the extras are listed
    return (["relay"] if relays else []) + (["hooks"] if hooks else [])


def scenarios(features: Features = Features(), *, judged: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    """Valid scenario dicts using only ``features`` beyond plain native tools; ``judged``:
    citing every rule whose check can judge them (differential_draws.judged_rules). Drawn
    without hypothesis's local-module constants (hypothesis_isolation), so a seed alone
    decides the stream."""
    return isolated(_scenario(features, judged))


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
    try:
        return find(scenarios(features), lambda s: bool(differ(port_a, port_b, s, provider=provider)),
                    settings=search_settings(examples))
    except NoSuchExample:
        return None


def fixture_from(scenario: dict[str, Any], port: str, against: str) -> dict[str, Any]:
    """The scenario renamed after its content, so a maintainer can drop it into fixtures/scenarios/."""
    data = {k: v for k, v in scenario.items() if k != "id"}
    suffix = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:8]
    title = f"Minimal difference found by a differential run of {port} against {against}"
    return {"id": f"diff-{suffix}", **data, "title": title}


"""Properties over random turns of 1..5 calls mixing real, relay and suspending tools:
resume (and the in-process path) answer every call exactly once, in call order, with the
content the contract predicts, and the next body passes the providers' pairing rules."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hostkit import Log, make_client, real_tool, suspending_tool, toolkit
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scripted import (
    AB_SCHEMA,
    STYLES,
    assistant,
    fake_provider,
    final,
    pairing_problems,
    results,
    turn,
    user,
)

from reference_py import Answer, Request, relay_tool

rule = pytest.mark.rule
KINDS = ("real", "relay", "susp")
ARGS = ['{ "b": 2,  "a": 1 }', '{"a":1}', '{ }', '{"z": [1, 2], "a": "x"}', '{"b" : null}']

turns = st.lists(st.sampled_from(KINDS), min_size=1, max_size=5)


def name_of(kind: str, i: int) -> str:
    return {"real": "real", "relay": "relay", "susp": "ask"}[kind] + str(i)


def tools_for(kinds: list[str], log: Log) -> list[Any]:
    out = []
    for i, kind in enumerate(kinds):
        name = name_of(kind, i)
        if kind == "real":
            out.append(real_tool(log, name, f"out{i}", delay=0.01 * ((5 - i) % 3)))
        elif kind == "relay":
            out.append(relay_tool(name, "client side", AB_SCHEMA))
        else:
            out.append(suspending_tool(log, name, f"q-{i}", f"P{i}", kind="input"))
    return out


def script_for(kinds: list[str]) -> dict[str, Any]:
    return turn(calls=[(f"c{i}", name_of(k, i), ARGS[i % len(ARGS)]) for i, k in enumerate(kinds)])


def answered(style: str, body: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(call id, content, is_error) of the results after the assistant turn (openai has no flag)."""
    after = body["messages"][2:]
    if style == "openai":
        return [(m["tool_call_id"], m["content"], False) for m in after]
    return [(b["tool_use_id"], b["content"], b["is_error"]) for b in after[0]["content"]]


@rule("resume.one-result-per-call", "resume.fills-later-slots", "resume.keeps-prior-results",
      "resume.replaces-placeholder", "susp.first-in-order", "relay.calls-in-one-request")
@settings(max_examples=40, deadline=None)
@given(kinds=turns, supplied=st.lists(st.booleans(), min_size=5, max_size=5),
       style=st.sampled_from(STYLES))
def test_resume_answers_every_call_once_in_order(kinds: list[str], supplied: list[bool],
                                                 style: str) -> None:
    suspending = [i for i, k in enumerate(kinds) if k != "real"]
    assume(suspending)
    halted_at = suspending[0]
    log = Log()
    entries = [{"id": f"c{j}", "output": f"ans{j}", "isError": False}
               for j in range(len(kinds)) if supplied[j] or j == halted_at]

    def answer_for(request: Request) -> Answer:
        if kinds[halted_at] == "relay":
            return Answer(id=request.id, ok=True, data={"results": entries})
        return Answer(id=request.id, ok=True, data={"token": "T", "results": [
            e for e in entries if e["id"] != f"c{halted_at}"]})

    async def go() -> tuple[Any, Any]:
        kit = await toolkit(*tools_for(kinds, log))
        client = make_client(style)
        halted = await client.run("go", toolkit=kit)
        resumed = await client.run_with_answer(toolkit=kit, history=halted.messages,
                                               pending=halted.pending,
                                               answer=answer_for(halted.pending))
        return halted, resumed

    with fake_provider(style, [script_for(kinds), final()]) as llm:
        halted, resumed = asyncio.run(go())
        bodies = llm.bodies
    assert halted.status == "pending"
    relay_ids = [f"c{i}" for i, k in enumerate(kinds) if k == "relay"]
    if kinds[halted_at] == "relay":
        assert [c["id"] for c in halted.pending.data["calls"]] == relay_ids
    else:
        assert halted.pending.to_wire() == {"id": f"q-{halted_at}", "kind": "input",
                                            "prompt": f"P{halted_at}"}
    expected: list[tuple[str, str, bool]] = []
    for j, kind in enumerate(kinds):
        name = name_of(kind, j)
        if j < halted_at:
            expected.append((f"c{j}", f"out{j}", False))
        elif j == halted_at:
            expected.append((f"c{j}", f"ans{j}" if kind == "relay" else f"{name} ok: T", False))
        elif supplied[j]:
            expected.append((f"c{j}", f"ans{j}", False))
        else:
            expected.append((f"c{j}", f"no result supplied on resume for {name}", True))
    next_body = bodies[1]
    assert next_body["messages"][2:] == results(style, expected)
    assert pairing_problems(style, next_body["messages"]) == []
    assert resumed.status == "done"
    for j, kind in enumerate(kinds):
        runs = log.ran(name_of(kind, j))
        if kind == "real":
            assert runs == 1, f"real call c{j} re-executed on resume"
        elif kind == "susp":
            assert runs == (2 if j == halted_at else 1)


@rule("resume.one-result-per-call", "relay.inprocess-one-callback-per-call",
      "loop.results-in-call-order")
@settings(max_examples=40, deadline=None)
@given(kinds=turns, style=st.sampled_from(STYLES))
def test_in_process_answers_every_call_once_in_order(kinds: list[str], style: str) -> None:
    log = Log()
    seen: list[str] = []

    async def wait_for(request: Request) -> Answer:
        if request.kind == "tool_call":
            calls = request.data["calls"]
            assert len(calls) == 1
            seen.append(calls[0]["id"])
            return Answer(id=request.id, ok=True, data={"output": "relayed " + calls[0]["id"]})
        return Answer(id=request.id, ok=True, data={"token": request.id})

    async def go() -> Any:
        kit = await toolkit(*tools_for(kinds, log))
        return await make_client(style, wait_for=wait_for).run("go", toolkit=kit)

    with fake_provider(style, [script_for(kinds), final()]) as llm:
        result = asyncio.run(go())
        bodies = llm.bodies
    expected = []
    for j, kind in enumerate(kinds):
        content = {"real": f"out{j}", "relay": f"relayed c{j}",
                   "susp": f"{name_of(kind, j)} ok: q-{j}"}[kind]
        expected.append((f"c{j}", content, False))
    assert answered(style, bodies[1]) == expected
    assert pairing_problems(style, bodies[1]["messages"]) == []
    assert sorted(seen) == sorted(f"c{j}" for j, k in enumerate(kinds) if k == "relay")
    assert result.status == "done"


@rule("resume.one-result-per-call")
def test_pairing_checker_catches_an_unbalanced_transcript() -> None:
    """The checker itself: the halted Anthropic/OpenAI transcript of two calls is refused."""
    script = turn(calls=[("c1", "a", "{}"), ("c2", "b", "{}")])
    for style in STYLES:
        unbalanced = [user("go"), assistant(style, script)] + results(style, [("c1", "x", True)])
        assert pairing_problems(style, unbalanced) != []
        balanced = [user("go"), assistant(style, script)] + results(
            style, [("c1", "x", True), ("c2", "y", False)])
        assert pairing_problems(style, balanced) == []

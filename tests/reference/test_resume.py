"""Durable resume (run_with_answer): the exact next request body after a halt, for relay
and non-relay halts, every answer shape, the error cases, and a persisted-JSON resume."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from hostkit import PATHS, Log, drive, make_client, real_tool, suspending_tool, toolkit
from scripted import (
    AB_SCHEMA,
    ARGS_BA,
    STYLES,
    assistant,
    body,
    declaration,
    fake_provider,
    final,
    pairing_problems,
    relay_prompt,
    relay_request,
    results,
    turn,
    user,
)

from reference_py import Answer, InMemoryStore, Request, ResumeError, relay_tool

rule = pytest.mark.rule
DESC = "Look it up on the client"
DECLINED = "declined/expired: " + relay_prompt("lookup")


def lookup(name: str = "lookup") -> Any:
    return relay_tool(name, DESC, AB_SCHEMA)


def weather(log: Log) -> Any:
    return real_tool(log, "weather", "sunny")


def signin(log: Log, **kw: Any) -> Any:
    return suspending_tool(log, "signin", "auth-1", "Sign in", url="https://auth.test/x", **kw)


def decl(style: str, name: str) -> dict[str, Any]:
    return declaration(style, name, DESC if name in ("lookup", "fetch") else f"the {name} tool",
                       AB_SCHEMA)


def res(request_id: str, *entries: tuple[str, str, bool]) -> Answer:
    return Answer(id=request_id, ok=True, data={"results": [
        {"id": i, "output": o, "isError": e} for i, o, e in entries]})


class Resumed:
    def __init__(self, halted: dict[str, Any], resumed: Any, bodies: list[dict[str, Any]],
                 log: Log) -> None:
        self.halted, self.resumed, self.bodies, self.log = halted, resumed, bodies, log

    @property
    def next_body(self) -> dict[str, Any]:
        assert len(self.bodies) == 2, f"expected one halt and one resumed call, got {self.bodies}"
        return self.bodies[1]


def halt_and_resume(style: str, script: dict[str, Any], makers: list[Callable[[Log], Any]],
                    answer_for: Callable[[Request], Answer], *, path: str = "run",
                    after: list[dict[str, Any]] | None = None) -> Resumed:
    log = Log()

    async def go() -> Any:
        kit = await toolkit(*[m(log) for m in makers])
        client = make_client(style, on_metric=log.on_metric, hooks=log.hooks())
        halted = await drive(client, path, "go", kit)
        assert halted.result["status"] == "pending", halted.result
        request = Request.from_wire(halted.result["pending"])
        resumed = await client.run_with_answer(toolkit=kit, history=halted.result["messages"],
                                               pending=request, answer=answer_for(request))
        return halted.result, resumed

    with fake_provider(style, [script, *(after or [final()])]) as llm:
        halted, resumed = asyncio.run(go())
        bodies = llm.bodies
    return Resumed(halted, resumed, bodies, log)


def expected_body(style: str, script: dict[str, Any], answered: list[tuple[str, str, bool]],
                  *names: str) -> dict[str, Any]:
    messages = [user("go"), assistant(style, script)] + results(style, answered)
    return body(style, messages, [decl(style, n) for n in names])


ONE = turn(calls=[("call_1", "lookup", ARGS_BA)])


@rule("resume.entry-points", "resume.replaces-placeholder", "resume.no-user-turn",
      "resume.one-result-per-call", "relay.answer-shapes", "relay.shorthand-one-call-only")
@pytest.mark.parametrize("shape", ["shorthand", "results"])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_single_relay_resume_exact_next_body(style: str, path: str, shape: str) -> None:
    def answer(request: Request) -> Answer:
        if shape == "shorthand":
            return Answer(id=request.id, ok=True, data={"output": "42"})
        return res(request.id, ("call_1", "42", False))

    out = halt_and_resume(style, ONE, [lambda _: lookup()], answer, path=path)
    assert out.next_body == expected_body(style, ONE, [("call_1", "42", False)], "lookup")
    assert out.resumed.status == "done"
    assert out.resumed.text == "all done"
    assert out.resumed.pending is None
    assert out.resumed.messages == out.next_body["messages"] + [assistant(style, final())]


@rule("relay.caller-failure", "relay.answer-shapes")
@pytest.mark.parametrize("shape", ["shorthand", "results"])
@pytest.mark.parametrize("style", STYLES)
def test_durable_caller_failure(style: str, shape: str) -> None:
    def answer(request: Request) -> Answer:
        if shape == "shorthand":
            return Answer(id=request.id, ok=True, data={"output": "boom", "isError": True})
        return res(request.id, ("call_1", "boom", True))

    out = halt_and_resume(style, ONE, [lambda _: lookup()], answer)
    assert out.next_body == expected_body(style, ONE, [("call_1", "boom", True)], "lookup")
    assert out.resumed.status == "done"


THREE = [("call_1", "lookup", ARGS_BA), ("call_2", "fetch", '{"a": 5}'),
         ("call_3", "lookup", '{ "a": 7 }')]


@rule("resume.one-result-per-call", "resume.fills-later-slots", "relay.calls-in-one-request")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_three_relay_calls_durable_resume(style: str, path: str) -> None:
    script = turn(calls=THREE)
    # Results supplied out of order: they are matched by id, recorded in call order.
    out = halt_and_resume(style, script, [lambda _: lookup(), lambda _: lookup("fetch")],
                          lambda r: res(r.id, ("call_3", "three", False),
                                        ("call_1", "one", False), ("call_2", "two", True)),
                          path=path)
    assert out.halted["pending"] == relay_request(style, out.halted["pending"]["id"], THREE)
    assert out.next_body == expected_body(style, script, [
        ("call_1", "one", False), ("call_2", "two", True), ("call_3", "three", False)],
        "lookup", "fetch")


@rule("relay.declined", "resume.fills-later-slots")
@pytest.mark.parametrize("style", STYLES)
def test_durable_decline_fills_every_relay_slot(style: str) -> None:
    script = turn(calls=[("call_1", "lookup", ARGS_BA), ("call_2", "weather", '{"a": 1}'),
                         ("call_3", "fetch", '{"a": 2}')])
    out = halt_and_resume(style, script, [lambda _: lookup(), weather, lambda _: lookup("fetch")],
                          lambda r: Answer(id=r.id, ok=False, reason="declined"))
    assert out.next_body == expected_body(style, script, [
        ("call_1", DECLINED, True),
        ("call_2", "no result supplied on resume for weather", True),
        ("call_3", DECLINED, True)], "lookup", "weather", "fetch")
    assert out.resumed.status == "done", "a declined relay is not a run error"
    assert out.log.ran("weather") == 1


@rule("resume.keeps-prior-results", "relay.shorthand-one-call-only", "resume.replaces-placeholder")
@pytest.mark.parametrize("shape", ["shorthand", "results"])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_real_then_relay_keeps_the_real_result(style: str, path: str, shape: str) -> None:
    script = turn(calls=[("call_1", "weather", ARGS_BA), ("call_2", "lookup", '{"a": 3}')])

    def answer(request: Request) -> Answer:
        if shape == "shorthand":  # answers the Request's one relay call (call_2), not slot 0
            return Answer(id=request.id, ok=True, data={"output": "42"})
        return res(request.id, ("call_2", "42", False))

    out = halt_and_resume(style, script, [weather, lambda _: lookup()], answer, path=path)
    assert out.next_body == expected_body(
        style, script, [("call_1", "sunny", False), ("call_2", "42", False)], "weather", "lookup")
    assert out.log.ran("weather") == 1, "a kept result is not re-executed"


@rule("resume.fills-later-slots", "resume.one-result-per-call", "resume.missing-result-text")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_calls_after_the_halted_one(style: str, path: str) -> None:
    script = turn(calls=[("call_1", "lookup", ARGS_BA), ("call_2", "weather", '{"a": 1}'),
                         ("call_3", "lookup", '{"a": 2}')])
    out = halt_and_resume(style, script, [lambda _: lookup(), weather],
                          lambda r: res(r.id, ("call_1", "one", False), ("call_3", "three", False)),
                          path=path)
    assert out.next_body == expected_body(style, script, [
        ("call_1", "one", False),
        ("call_2", "no result supplied on resume for weather", True),
        ("call_3", "three", False)], "lookup", "weather")
    assert out.log.ran("weather") == 1, "later calls are never re-executed on resume"


@rule("resume.fills-later-slots")
@pytest.mark.parametrize("style", STYLES)
def test_later_real_call_filled_from_the_answer(style: str) -> None:
    script = turn(calls=[("call_1", "lookup", ARGS_BA), ("call_2", "weather", '{"a": 1}')])
    out = halt_and_resume(style, script, [lambda _: lookup(), weather],
                          lambda r: res(r.id, ("call_1", "one", False), ("call_2", "cloudy", False)))
    assert out.next_body["messages"][2:] == results(
        style, [("call_1", "one", False), ("call_2", "cloudy", False)])
    assert out.log.ran("weather") == 1


@rule("relay.shorthand-several-calls", "resume.fills-later-slots", "resume.missing-result-text")
@pytest.mark.parametrize("style", STYLES)
def test_shorthand_does_not_answer_a_multi_call_request(style: str) -> None:
    """A two-relay-call Request answered with the shorthand: neither slot takes it."""
    script = turn(calls=[("call_1", "lookup", ARGS_BA), ("call_2", "lookup", '{"a": 1}')])
    out = halt_and_resume(style, script, [lambda _: lookup()],
                          lambda r: Answer(id=r.id, ok=True, data={"output": "42"}))
    missing = "no result supplied on resume for lookup"
    assert out.next_body == expected_body(
        style, script, [("call_1", missing, True), ("call_2", missing, True)], "lookup")


@rule("resume.answer-id-must-match")
@pytest.mark.parametrize("entry", ["run_with_answer", "ask_with_answer"])
@pytest.mark.parametrize("style", STYLES)
def test_answer_id_mismatch_is_refused_without_provider_call(style: str, entry: str) -> None:
    async def go() -> None:
        kit = await toolkit(lookup())
        client = make_client(style, store=InMemoryStore())
        halted = await client.ask("go", toolkit=kit, id="conv-1")
        wrong = Answer(id="not-" + halted.pending.id, ok=True, data={"output": "42"})
        if entry == "run_with_answer":
            await client.run_with_answer(toolkit=kit, history=halted.messages,
                                         pending=halted.pending, answer=wrong)
        else:
            await client.ask_with_answer(toolkit=kit, id="conv-1", pending=halted.pending,
                                         answer=wrong)

    with fake_provider(style, [ONE, final()]) as llm:
        with pytest.raises(ResumeError) as caught:
            asyncio.run(go())
        assert llm.call_count == 1, "no provider call on a mismatched answer"
    assert "\n" not in str(caught.value).strip()


@rule("resume.needs-halted-turn")
@pytest.mark.parametrize("history", [
    [], [user("hi"), {"role": "assistant", "content": "hello"}]], ids=["empty", "no-tool-turn"])
@pytest.mark.parametrize("style", STYLES)
def test_resume_without_halted_turn_is_refused(style: str, history: list[dict[str, Any]]) -> None:
    request = Request(id="r1", kind="tool_call", prompt=relay_prompt("lookup"),
                      data={"calls": [{"id": "call_1", "name": "lookup", "input": {},
                                       "arguments": "{}"}]})

    async def go() -> None:
        await make_client(style).run_with_answer(
            toolkit=await toolkit(lookup()), history=history, pending=request,
            answer=Answer(id="r1", ok=True, data={"output": "x"}))

    with fake_provider(style, [final()]) as llm:
        with pytest.raises(ResumeError):
            asyncio.run(go())
        assert llm.call_count == 0


@rule("resume.non-relay-reexecutes", "susp.waitfor-retry-once")
@pytest.mark.parametrize("case", ["ok", "declined", "unresolved"])
@pytest.mark.parametrize("style", STYLES)
def test_non_relay_halt_reexecuted_with_answer(style: str, case: str) -> None:
    script = turn(calls=[("call_1", "signin", ARGS_BA)])
    answer = Answer(id="auth-1", ok=case != "declined", data={"token": "T"})
    out = halt_and_resume(style, script, [lambda lg: signin(lg, always=case == "unresolved")],
                          lambda r: answer)
    content = {"ok": ("signin ok: T", False), "declined": ("declined/expired: Sign in", True),
               "unresolved": ("unresolved: Sign in", True)}[case]
    assert out.next_body == expected_body(style, script, [("call_1", *content)], "signin")
    executions = out.log.executions
    if case == "declined":
        assert len(executions) == 1
    else:
        assert executions[1:] == [("signin", {"b": 2, "a": 1}, answer)], "re-executed once"


@rule("resume.non-relay-reexecutes", "resume.fills-later-slots", "resume.keeps-prior-results",
      "relay.non-relay-first-uncontaminated")
@pytest.mark.parametrize("supply_relay", [False, True])
@pytest.mark.parametrize("style", STYLES)
def test_auth_then_relay_resume(style: str, supply_relay: bool) -> None:
    script = turn(calls=[("call_1", "signin", ARGS_BA), ("call_2", "lookup", '{"a": 3}')])
    data: dict[str, Any] = {"token": "T"}
    if supply_relay:
        data["results"] = [{"id": "call_2", "output": "42", "isError": False}]
    out = halt_and_resume(style, script, [signin, lambda _: lookup()],
                          lambda r: Answer(id="auth-1", ok=True, data=data))
    second = ("call_2", "42", False) if supply_relay else \
        ("call_2", "no result supplied on resume for lookup", True)
    assert out.next_body == expected_body(style, script, [("call_1", "signin ok: T", False), second],
                                          "signin", "lookup")


@rule("resume.fills-later-slots", "resume.one-result-per-call", "resume.non-relay-reexecutes")
@pytest.mark.parametrize("style", STYLES)
def test_four_call_halt_resumes_balanced(style: str) -> None:
    script = turn(calls=[("c1", "real1", ARGS_BA), ("c2", "ask1", ARGS_BA),
                         ("c3", "ask2", ARGS_BA), ("c4", "real2", '{"a": 1}')])
    makers = [lambda lg: real_tool(lg, "real1", "real-out"),
              lambda lg: suspending_tool(lg, "ask1", "q-1", "P1", kind="question"),
              lambda lg: suspending_tool(lg, "ask2", "q-2", "P2", kind="question"),
              lambda lg: real_tool(lg, "real2", "real2-out")]
    out = halt_and_resume(style, script, makers,
                          lambda r: Answer(id="q-1", ok=True, data={"token": "yes"}))
    assert out.next_body["messages"][2:] == results(style, [
        ("c1", "real-out", False), ("c2", "ask1 ok: yes", False),
        ("c3", "no result supplied on resume for ask2", True),
        ("c4", "no result supplied on resume for real2", True)])
    assert pairing_problems(style, out.next_body["messages"]) == []
    assert [n for n, _, _ in out.log.executions].count("ask2") == 1
    assert [n for n, _, _ in out.log.executions].count("real2") == 1


@rule("resume.across-process", "resume.entry-points")
@pytest.mark.parametrize("style", STYLES)
def test_resume_from_persisted_json_in_a_fresh_client(style: str) -> None:
    script = turn(calls=[("call_1", "weather", ARGS_BA), ("call_2", "lookup", '{"a": 3}')])

    async def first_process() -> str:
        kit = await toolkit(weather(Log()), lookup())
        halted = await make_client(style).run("go", toolkit=kit)
        return json.dumps({"messages": halted.messages, "pending": halted.pending.to_wire()})

    async def second_process(saved: str) -> Any:
        state = json.loads(saved)
        pending_request = Request.from_wire(state["pending"])
        answer = Answer.from_wire(json.loads(json.dumps(
            {"id": pending_request.id, "ok": True,
             "data": {"results": [{"id": "call_2", "output": "42", "isError": False}]}})))
        kit = await toolkit(weather(Log()), lookup())
        return await make_client(style).run_with_answer(
            toolkit=kit, history=state["messages"], pending=pending_request, answer=answer)

    with fake_provider(style, [script, final()]) as llm:
        saved = asyncio.run(first_process())
        resumed = asyncio.run(second_process(saved))
        bodies = llm.bodies
    assert bodies[1] == expected_body(style, script, [("call_1", "sunny", False),
                                                      ("call_2", "42", False)], "weather", "lookup")
    assert resumed.status == "done"


@rule("resume.may-halt-again", "relay.multi-round")
@pytest.mark.parametrize("style", STYLES)
def test_three_durable_rounds(style: str) -> None:
    rounds = [turn(calls=[(f"call_r{i}", "lookup", f'{{ "a": {i} }}')]) for i in (1, 2, 3)]

    async def go() -> list[Any]:
        kit = await toolkit(lookup())
        client = make_client(style)
        outcomes = [await client.run("go", toolkit=kit)]
        for _ in range(3):
            last = outcomes[-1]
            call_id = last.pending.data["calls"][0]["id"]
            outcomes.append(await client.run_with_answer(
                toolkit=kit, history=last.messages, pending=last.pending,
                answer=res(last.pending.id, (call_id, "got " + call_id, False))))
        return outcomes

    with fake_provider(style, [*rounds, final()]) as llm:
        outcomes = asyncio.run(go())
        bodies = llm.bodies
    assert [o.status for o in outcomes] == ["pending", "pending", "pending", "done"]
    for i, o in enumerate(outcomes[:3], start=1):
        assert o.pending.to_wire() == relay_request(
            style, o.pending.id, [(f"call_r{i}", "lookup", f'{{ "a": {i} }}')])
    expected = [user("go")]
    for i, script in enumerate(rounds, start=1):
        expected += [assistant(style, script)] + results(
            style, [(f"call_r{i}", f"got call_r{i}", False)])
    assert bodies[3] == body(style, expected, [decl(style, "lookup")])
    assert len(bodies) == 4

"""§10 suspension: wire keys, the waitFor retry-once / declined / unresolved path, the
durable halt of a single suspension, first-in-order, not-a-tool-error, beforeTool pending."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hostkit import PATHS, Log, drive, make_client, real_tool, suspending_tool, toolkit
from scripted import AB_SCHEMA, ARGS_BA, STYLES, assistant, body, declaration, fake_provider, final, results, turn, user

from reference_py import Answer, Request, WireError, pending, pending_of

rule = pytest.mark.rule

SIGNIN = {"id": "auth-1", "kind": "authorization", "prompt": "Sign in",
          "url": "https://auth.test/x"}
ONE_CALL = turn(calls=[("call_1", "signin", ARGS_BA)])


def signin(log: Log, **kw: Any) -> Any:
    return suspending_tool(log, "signin", "auth-1", "Sign in", url="https://auth.test/x", **kw)


@rule("susp.request-keys")
def test_request_wire_keys() -> None:
    assert Request(id="r1", kind="input", prompt="p").to_wire() == {
        "id": "r1", "kind": "input", "prompt": "p"}
    full = {"id": "r1", "kind": "input", "prompt": "p", "url": "u", "data": {"k": "v"},
            "expiresAt": "2026-01-01T00:00:00Z"}
    assert Request.from_wire(full).to_wire() == full
    for bad in ({**full, "extra": 1}, {**full, "url": None}, {"id": "r1", "kind": "input"},
                {**full, "prompt": 3}):
        with pytest.raises(WireError):
            Request.from_wire(bad)


@rule("susp.answer-keys")
def test_answer_wire_keys() -> None:
    assert Answer(id="r1", ok=True).to_wire() == {"id": "r1", "ok": True}
    full = {"id": "r1", "ok": False, "data": {"k": "v"}, "reason": "declined"}
    assert Answer.from_wire(full).to_wire() == full
    for bad in ({**full, "extra": 1}, {**full, "data": None}, {"id": "r1"},
                {"id": "r1", "ok": "yes"}):
        with pytest.raises(WireError):
            Answer.from_wire(bad)


@rule("susp.request-keys")
def test_pending_helper_builds_a_suspension() -> None:
    result = pending(kind="authorization", prompt="Sign in", id="auth-1", url="https://auth.test/x")
    assert result.is_error is True
    assert result.output == "Sign in\nhttps://auth.test/x"
    assert pending_of(result).to_wire() == SIGNIN


def waiter(answer_for: Any, seen: list[dict[str, Any]], sync: bool) -> Any:
    if sync:
        def wait_for(request: Request) -> Answer:
            seen.append(request.to_wire())
            return answer_for(request)
        return wait_for

    async def wait_for_async(request: Request) -> Answer:
        seen.append(request.to_wire())
        return answer_for(request)
    return wait_for_async


def run_signin(style: str, path: str, answer_for: Any, *, sync: bool = False,
               always: bool = False) -> tuple[Log, list[dict[str, Any]], Any, Any]:
    log, seen = Log(), []

    async def go() -> Any:
        client = make_client(style, wait_for=waiter(answer_for, seen, sync),
                             hooks=log.hooks(), on_metric=log.on_metric)
        return await drive(client, path, "go", await toolkit(signin(log, always=always)))

    with fake_provider(style, [ONE_CALL, final()]) as llm:
        outcome = asyncio.run(go())
    return log, seen, llm, outcome


def next_body(style: str, path: str, content: str, is_error: bool) -> dict[str, Any]:
    messages = [user("go"), assistant(style, ONE_CALL)] + results(
        style, [("call_1", content, is_error)])
    return body(style, messages, [declaration(style, "signin", "the signin tool", AB_SCHEMA)],
                stream=path == "stream")


@rule("susp.waitfor-retry-once", "susp.not-a-tool-error")
@pytest.mark.parametrize("sync", [False, True])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_waitfor_ok_reexecutes_once_with_answer(style: str, path: str, sync: bool) -> None:
    answer = Answer(id="auth-1", ok=True, data={"token": "T"})
    log, seen, llm, outcome = run_signin(style, path, lambda r: answer, sync=sync)
    assert seen == [SIGNIN]
    assert log.executions == [("signin", {"b": 2, "a": 1}, None),
                              ("signin", {"b": 2, "a": 1}, answer)]
    assert llm.bodies[1] == next_body(style, path, "signin ok: T", False)
    assert outcome.result["status"] == "done"
    assert log.tool_events() == [
        {"event": "tool", "tool": "signin", "source": "native", "isError": False, "pending": True},
        {"event": "tool", "tool": "signin", "source": "native", "isError": False},
    ]
    assert [e["name"] for e in log.after] == ["signin"], "afterTool only on the retried result"
    assert [e["name"] for e in log.before] == ["signin"], "beforeTool is not asked again"


@rule("susp.declined", "susp.not-a-tool-error")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_waitfor_declined(style: str, path: str) -> None:
    log, seen, llm, outcome = run_signin(
        style, path, lambda r: Answer(id=r.id, ok=False, reason="declined"))
    assert len(log.executions) == 1, "a declined call is not re-executed"
    assert llm.bodies[1] == next_body(style, path, "declined/expired: Sign in", True)
    assert outcome.result["status"] == "done"
    assert log.after == []
    assert log.tool_events() == [
        {"event": "tool", "tool": "signin", "source": "native", "isError": False, "pending": True}]


@rule("susp.unresolved")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_waitfor_retry_suspends_again_is_unresolved(style: str, path: str) -> None:
    log, seen, llm, outcome = run_signin(
        style, path, lambda r: Answer(id=r.id, ok=True, data={"token": "T"}), always=True)
    assert len(log.executions) == 2, "retried exactly once"
    assert len(seen) == 1, "waitFor is not asked a second time"
    assert llm.bodies[1] == next_body(style, path, "unresolved: Sign in", True)
    assert outcome.result["status"] == "done"


@rule("susp.waitfor-error-aborts")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_waitfor_that_raises_aborts_the_run(style: str, path: str) -> None:
    def boom(request: Request) -> Answer:
        raise RuntimeError("host exploded")

    async def go() -> Any:
        client = make_client(style, wait_for=boom)
        return await drive(client, path, "go", await toolkit(signin(Log())))

    with fake_provider(style, [ONE_CALL, final()]) as llm:
        with pytest.raises(RuntimeError, match="host exploded"):
            asyncio.run(go())
    assert llm.call_count == 1, "no further provider turn after the host failed"


@rule("susp.durable-halt", "susp.placeholder", "halt.run-result", "susp.not-a-tool-error")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_durable_halt_single_suspension(style: str, path: str) -> None:
    log = Log()

    async def go() -> Any:
        client = make_client(style, hooks=log.hooks(), on_metric=log.on_metric)
        return await drive(client, path, "go", await toolkit(signin(log)))

    with fake_provider(style, [ONE_CALL, final()]) as llm:
        outcome = asyncio.run(go())
    assert llm.call_count == 1
    result = outcome.result
    assert result["status"] == "pending"
    assert result["pending"] == SIGNIN
    assert result["text"] == "Sign in"
    assert "limit" not in result
    # The placeholder is the prompt only: never the "\n" + url the tool's own output had.
    assert result["messages"] == [user("go"), assistant(style, ONE_CALL)] + results(
        style, [("call_1", "Sign in", True)])
    assert result["toolCallCount"] == 1
    assert log.after == []
    assert log.tool_events() == [
        {"event": "tool", "tool": "signin", "source": "native", "isError": False, "pending": True}]


@rule("susp.first-in-order")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_first_suspension_in_call_order_wins(style: str, path: str) -> None:
    """The first call suspends last (it sleeps); it is still the one surfaced."""
    log = Log()
    script = turn(calls=[("call_1", "slow", ARGS_BA), ("call_2", "fast", ARGS_BA)])

    async def go() -> Any:
        kit = await toolkit(suspending_tool(log, "slow", "p-slow", "Slow?", delay=0.2),
                            suspending_tool(log, "fast", "p-fast", "Fast?"))
        return await drive(make_client(style), path, "go", kit)

    with fake_provider(style, [script]):
        outcome = asyncio.run(go())
    assert outcome.result["pending"] == {"id": "p-slow", "kind": "authorization", "prompt": "Slow?"}
    assert outcome.result["messages"][2:] == results(style, [("call_1", "Slow?", True)])


@rule("susp.before-tool-raised", "susp.waitfor-retry-once")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_before_tool_pending_in_process(style: str, path: str) -> None:
    log, seen = Log(), []
    approval = {"id": "appr-1", "kind": "approval", "prompt": "Approve?"}

    def gate(event: dict[str, Any]) -> Any:
        return {"result": pending(kind="approval", prompt="Approve?", id="appr-1")}

    answer = Answer(id="appr-1", ok=True, data={"token": "yes"})

    async def go() -> Any:
        client = make_client(style, hooks=log.hooks(gate), on_metric=log.on_metric,
                             wait_for=waiter(lambda r: answer, seen, sync=False))
        return await drive(client, path, "go", await toolkit(real_tool(log, "signin", "real")))

    with fake_provider(style, [ONE_CALL, final()]) as llm:
        asyncio.run(go())
    assert seen == [approval]
    assert log.executions == [("signin", {"b": 2, "a": 1}, answer)], \
        "the real tool runs once, after the answer, with ctx.answer"
    assert len(log.before) == 1, "the hook is not asked again"
    assert llm.bodies[1] == next_body(style, path, "real", False)
    assert log.tool_events()[0] == {"event": "tool", "tool": "signin", "source": "native",
                                    "isError": False, "pending": True}


@rule("susp.before-tool-raised", "susp.durable-halt", "susp.placeholder")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_before_tool_pending_durable(style: str, path: str) -> None:
    log = Log()

    def gate(event: dict[str, Any]) -> Any:
        return {"result": pending(kind="approval", prompt="Approve?", id="appr-1")}

    async def go() -> Any:
        client = make_client(style, hooks=log.hooks(gate))
        return await drive(client, path, "go", await toolkit(real_tool(log, "signin", "real")))

    with fake_provider(style, [ONE_CALL, final()]):
        outcome = asyncio.run(go())
    assert log.executions == []
    assert outcome.result["pending"] == {"id": "appr-1", "kind": "approval", "prompt": "Approve?"}
    assert outcome.result["messages"][2:] == results(style, [("call_1", "Approve?", True)])


@rule("susp.waitfor-concurrent")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_non_relay_suspensions_outstanding_at_once(style: str, path: str) -> None:
    """Advisory for ports; the reference calls waitFor for both suspensions concurrently."""
    log = Log()
    together: list[bool] = []
    script = turn(calls=[("call_1", "ask1", ARGS_BA), ("call_2", "ask2", ARGS_BA)])

    async def go() -> Any:
        both = asyncio.Event()
        seen: list[str] = []

        async def wait_for(request: Request) -> Answer:
            seen.append(request.id)
            if len(seen) == 2:
                both.set()
            try:
                await asyncio.wait_for(both.wait(), timeout=1.0)
                together.append(True)
            except TimeoutError:
                together.append(False)
            return Answer(id=request.id, ok=True, data={"token": request.id})

        kit = await toolkit(suspending_tool(log, "ask1", "q-1", "One?", kind="question"),
                            suspending_tool(log, "ask2", "q-2", "Two?", kind="question"))
        return await drive(make_client(style, wait_for=wait_for), path, "go", kit)

    with fake_provider(style, [script, final()]) as llm:
        asyncio.run(go())
    assert together == [True, True]
    assert llm.bodies[1]["messages"][2:] == results(
        style, [("call_1", "ask1 ok: q-1", False), ("call_2", "ask2 ok: q-2", False)])


@rule("susp.answer-keys")
@pytest.mark.parametrize("style", STYLES)
def test_malformed_answer_from_wait_for_is_a_clear_error(style: str) -> None:
    def wait_for(request: Request) -> Any:
        return {"id": request.id, "ok": "yes"}

    async def go() -> Any:
        return await make_client(style, wait_for=wait_for).run(
            "go", toolkit=await toolkit(signin(Log())))

    with fake_provider(style, [ONE_CALL, final()]) as llm:
        with pytest.raises(WireError) as caught:
            asyncio.run(go())
        assert llm.call_count == 1
    assert "\n" not in str(caught.value).strip()


@rule("susp.answer-keys", "resume.answer-id-must-match")
@pytest.mark.parametrize("style", STYLES)
def test_malformed_answer_on_resume_is_refused_before_any_call(style: str) -> None:
    async def go() -> Any:
        kit = await toolkit(signin(Log()))
        client = make_client(style)
        halted = await client.run("go", toolkit=kit)
        return await client.run_with_answer(toolkit=kit, history=halted.messages,
                                            pending=halted.pending,
                                            answer={"id": "auth-1", "ok": True, "data": None})

    with fake_provider(style, [ONE_CALL, final()]) as llm:
        with pytest.raises(WireError):
            asyncio.run(go())
        assert llm.call_count == 1

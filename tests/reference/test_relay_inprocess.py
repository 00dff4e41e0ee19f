"""Relay on the in-process path (waitFor set): one callback per relay call, each carrying
exactly its own call, all outstanding at once; the caller's result reaches the next body."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hostkit import PATHS, Log, drive, make_client, real_tool, toolkit
from scripted import (
    AB_SCHEMA,
    ARGS_BA,
    STYLES,
    assistant,
    body,
    declaration,
    fake_provider,
    final,
    relay_prompt,
    relay_request,
    results,
    turn,
    user,
)

from reference_py import Answer, Request, relay_tool

rule = pytest.mark.rule
LOOKUP_DESC = "Look it up on the client"
SHAPES = ("shorthand", "results")


def lookup() -> Any:
    return relay_tool("lookup", LOOKUP_DESC, AB_SCHEMA)


def decls(style: str, *names: str) -> list[dict[str, Any]]:
    out = []
    for name in names:
        desc = LOOKUP_DESC if name in ("lookup", "fetch") else f"the {name} tool"
        out.append(declaration(style, name, desc, AB_SCHEMA))
    return out


def answer_data(shape: str, call_id: str, output: str, is_error: bool = False) -> dict[str, Any]:
    if shape == "shorthand":
        return {"output": output, "isError": is_error} if is_error else {"output": output}
    return {"results": [{"id": call_id, "output": output, "isError": is_error}]}


def host(seen: list[dict[str, Any]], reply: Any) -> Any:
    async def wait_for(request: Request) -> Answer:
        wire = request.to_wire()
        seen.append(wire)
        return reply(wire)
    return wait_for


def with_id(expected: dict[str, Any], seen: dict[str, Any]) -> dict[str, Any]:
    """Request ids are generated; everything else is literal."""
    assert isinstance(seen.get("id"), str) and seen["id"], seen
    return {**expected, "id": seen["id"]}


ONE = turn(calls=[("call_1", "lookup", ARGS_BA)])


@rule("relay.request-kind", "relay.call-entry-keys", "relay.call-id-stamped",
      "relay.arguments-raw-openai", "relay.arguments-parse-to-input",
      "relay.arguments-anthropic-format", "relay.prompt-text", "relay.answer-shapes",
      "relay.inprocess-one-callback-per-call", "susp.request-keys")
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_single_relay_call_reaches_next_body(style: str, path: str, shape: str) -> None:
    seen: list[dict[str, Any]] = []

    def reply(wire: dict[str, Any]) -> Answer:
        return Answer(id=wire["id"], ok=True, data=answer_data(shape, "call_1", "42"))

    async def go() -> Any:
        client = make_client(style, wait_for=host(seen, reply))
        return await drive(client, path, "go", await toolkit(lookup()))

    with fake_provider(style, [ONE, final()]) as llm:
        outcome = asyncio.run(go())
    assert len(seen) == 1
    assert seen[0] == with_id(relay_request(style, "", [("call_1", "lookup", ARGS_BA)]), seen[0])
    assert seen[0]["prompt"] == "relay tool call lookup to the caller for execution"
    messages = [user("go"), assistant(style, ONE)] + results(style, [("call_1", "42", False)])
    assert llm.bodies[1] == body(style, messages, decls(style, "lookup"), stream=path == "stream")
    assert outcome.result["status"] == "done"
    assert outcome.result["text"] == "all done"


@rule("relay.caller-failure", "relay.answer-shapes")
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_caller_side_failure_is_an_error_result(style: str, path: str, shape: str) -> None:
    seen: list[dict[str, Any]] = []

    def reply(wire: dict[str, Any]) -> Answer:
        return Answer(id=wire["id"], ok=True, data=answer_data(shape, "call_1", "boom", True))

    async def go() -> Any:
        return await drive(make_client(style, wait_for=host(seen, reply)), path, "go",
                           await toolkit(lookup()))

    with fake_provider(style, [ONE, final()]) as llm:
        outcome = asyncio.run(go())
    assert llm.bodies[1]["messages"][2:] == results(style, [("call_1", "boom", True)])
    assert outcome.result["status"] == "done"


@rule("relay.declined", "susp.declined")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_caller_declines(style: str, path: str) -> None:
    seen: list[dict[str, Any]] = []
    log = Log()

    async def go() -> Any:
        client = make_client(style, on_metric=log.on_metric, hooks=log.hooks(),
                             wait_for=host(seen, lambda w: Answer(id=w["id"], ok=False,
                                                                  reason="declined")))
        return await drive(client, path, "go", await toolkit(lookup()))

    with fake_provider(style, [ONE, final()]) as llm:
        outcome = asyncio.run(go())
    assert llm.bodies[1]["messages"][2:] == results(
        style, [("call_1", "declined/expired: " + relay_prompt("lookup"), True)])
    assert outcome.result["status"] == "done"
    assert outcome.result["text"] == "all done"
    assert log.tool_events() == [{"event": "tool", "tool": "lookup", "source": "relay",
                                  "isError": False, "pending": True}]
    assert log.after == []


@rule("relay.inprocess-one-callback-per-call", "relay.call-id-stamped", "loop.results-in-call-order")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_three_parallel_relay_calls_all_outstanding(style: str, path: str) -> None:
    """The host parks every callback until all three are outstanding (a sequential loop
    would hang; the timeout turns that into a failure)."""
    script = turn(calls=[("call_1", "lookup", ARGS_BA), ("call_2", "fetch", '{"a": 5}'),
                         ("call_3", "lookup", '{ "a": 7 }')])
    seen: list[dict[str, Any]] = []
    released_together: list[bool] = []

    async def go() -> Any:
        all_three = asyncio.Event()

        async def wait_for(request: Request) -> Answer:
            wire = request.to_wire()
            seen.append(wire)
            if len(seen) == 3:
                all_three.set()
            try:
                await asyncio.wait_for(all_three.wait(), timeout=1.5)
                released_together.append(True)
            except TimeoutError:
                released_together.append(False)
            call_id = wire["data"]["calls"][0]["id"]
            return Answer(id=wire["id"], ok=True,
                          data={"results": [{"id": call_id, "output": f"out-{call_id}",
                                             "isError": False}]})

        kit = await toolkit(lookup(), relay_tool("fetch", LOOKUP_DESC, AB_SCHEMA))
        return await drive(make_client(style, wait_for=wait_for), path, "go", kit)

    with fake_provider(style, [script, final()]) as llm:
        outcome = asyncio.run(go())
    assert released_together == [True, True, True], "all three callbacks must be outstanding at once"
    by_call = {w["data"]["calls"][0]["id"]: w for w in seen}
    assert sorted(by_call) == ["call_1", "call_2", "call_3"]
    for call_id, name, raw in [("call_1", "lookup", ARGS_BA), ("call_2", "fetch", '{"a": 5}'),
                               ("call_3", "lookup", '{ "a": 7 }')]:
        got = by_call[call_id]
        assert got == with_id(relay_request(style, "", [(call_id, name, raw)]), got)
    assert len({w["id"] for w in seen}) == 3, "each callback carries its own Request id"
    assert llm.bodies[1]["messages"][2:] == results(style, [
        ("call_1", "out-call_1", False), ("call_2", "out-call_2", False),
        ("call_3", "out-call_3", False)])
    assert outcome.result["status"] == "done"


@rule("relay.shorthand-one-call-only", "relay.answer-shapes", "loop.results-in-call-order",
      "relay.alongside-real-tools")
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_relay_plus_real_tool_in_one_turn(style: str, path: str, shape: str) -> None:
    log = Log()
    seen: list[dict[str, Any]] = []
    script = turn(calls=[("call_1", "weather", ARGS_BA), ("call_2", "lookup", '{"a":  3}')])

    def reply(wire: dict[str, Any]) -> Answer:
        return Answer(id=wire["id"], ok=True, data=answer_data(shape, "call_2", "42"))

    async def go() -> Any:
        kit = await toolkit(real_tool(log, "weather", "sunny"), lookup())
        return await drive(make_client(style, wait_for=host(seen, reply)), path, "go", kit)

    with fake_provider(style, [script, final()]) as llm:
        asyncio.run(go())
    assert log.ran("weather") == 1
    assert [w["data"]["calls"] for w in seen] == [
        relay_request(style, "", [("call_2", "lookup", '{"a":  3}')])["data"]["calls"]]
    messages = [user("go"), assistant(style, script)] + results(
        style, [("call_1", "sunny", False), ("call_2", "42", False)])
    assert llm.bodies[1] == body(style, messages, decls(style, "weather", "lookup"),
                                 stream=path == "stream")


@rule("relay.not-a-tool-error", "susp.not-a-tool-error")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_relay_suspension_metric_in_process(style: str, path: str) -> None:
    log = Log()

    async def go() -> Any:
        client = make_client(style, on_metric=log.on_metric, hooks=log.hooks(),
                             wait_for=host([], lambda w: Answer(id=w["id"], ok=True,
                                                                data={"output": "42"})))
        return await drive(client, path, "go", await toolkit(lookup()))

    with fake_provider(style, [ONE, final()]):
        asyncio.run(go())
    events = log.tool_events()
    assert events[0] == {"event": "tool", "tool": "lookup", "source": "relay",
                         "isError": False, "pending": True}
    assert all(e["isError"] is False for e in events)
    assert sum(1 for e in events if e.get("pending")) == 1
    assert len([e for e in log.after if e["name"] == "lookup"]) <= 1, \
        "afterTool never sees the suspension, at most the caller's result"


@rule("relay.multi-round")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_three_successive_rounds_in_process(style: str, path: str) -> None:
    rounds = [turn(calls=[(f"call_r{i}", "lookup", f'{{ "a": {i} }}')]) for i in (1, 2, 3)]
    seen: list[dict[str, Any]] = []

    def reply(wire: dict[str, Any]) -> Answer:
        return Answer(id=wire["id"], ok=True,
                      data={"output": "got " + wire["data"]["calls"][0]["id"]})

    async def go() -> Any:
        return await drive(make_client(style, wait_for=host(seen, reply)), path, "go",
                           await toolkit(lookup()))

    with fake_provider(style, [*rounds, final()]) as llm:
        outcome = asyncio.run(go())
    assert [w["data"]["calls"] for w in seen] == [
        relay_request(style, "", [(f"call_r{i}", "lookup", f'{{ "a": {i} }}')])["data"]["calls"]
        for i in (1, 2, 3)]
    expected = [user("go")]
    for i, script in enumerate(rounds, start=1):
        expected += [assistant(style, script)] + results(
            style, [(f"call_r{i}", f"got call_r{i}", False)])
    assert llm.bodies[3]["messages"] == expected
    assert outcome.result["turns"] == 4
    assert outcome.result["status"] == "done"


@rule("relay.args-rewrite")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_before_tool_args_rewrite_reaches_the_request(style: str, path: str) -> None:
    log = Log()
    seen: list[dict[str, Any]] = []

    def rewrite(event: dict[str, Any]) -> Any:
        return {"args": {"z": 9, "a": "é"}}

    async def go() -> Any:
        client = make_client(style, hooks=log.hooks(rewrite),
                             wait_for=host(seen, lambda w: Answer(id=w["id"], ok=True,
                                                                  data={"output": "ok"})))
        return await drive(client, path, "go", await toolkit(lookup()))

    with fake_provider(style, [ONE, final()]):
        asyncio.run(go())
    assert log.before[0]["args"] == {"b": 2, "a": 1}
    assert seen[0]["data"]["calls"] == [{"id": "call_1", "name": "lookup",
                                         "input": {"z": 9, "a": "é"},
                                         "arguments": '{"z":9,"a":"é"}'}]

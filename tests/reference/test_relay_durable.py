"""Relay on the durable path (no waitFor): the run halts with one Request carrying all the
turn's relay calls in call order; a non-relay suspension first in order is surfaced alone."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hostkit import PATHS, Log, drive, make_client, real_tool, suspending_tool, toolkit
from scripted import (
    AB_SCHEMA,
    ARGS_BA,
    STYLES,
    assistant,
    fake_provider,
    final,
    relay_prompt,
    relay_request,
    results,
    turn,
    user,
)

from reference_py import relay_tool

rule = pytest.mark.rule
SIGNIN = {"id": "auth-1", "kind": "authorization", "prompt": "Sign in",
          "url": "https://auth.test/x"}


def lookup(name: str = "lookup") -> Any:
    return relay_tool(name, "Look it up on the client", AB_SCHEMA)


def halt(style: str, path: str, script: dict[str, Any], *tools_of: Any,
         log: Log | None = None) -> dict[str, Any]:
    log = log or Log()

    async def go() -> Any:
        client = make_client(style, on_metric=log.on_metric, hooks=log.hooks())
        kit = await toolkit(*[make(log) for make in tools_of])
        return await drive(client, path, "go", kit)

    with fake_provider(style, [script, final()]) as llm:
        outcome = asyncio.run(go())
    assert llm.call_count == 1, "a durable halt makes no further provider call"
    return outcome.result


def generated_id(result: dict[str, Any]) -> str:
    request_id = result["pending"]["id"]
    assert isinstance(request_id, str) and request_id
    return request_id


@rule("relay.request-kind", "relay.call-entry-keys", "relay.call-id-stamped",
      "relay.arguments-raw-openai", "relay.arguments-parse-to-input",
      "relay.arguments-anthropic-format", "relay.prompt-text", "susp.durable-halt",
      "susp.placeholder", "halt.run-result", "relay.not-a-tool-error", "susp.not-a-tool-error")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_single_relay_call_halts(style: str, path: str) -> None:
    log = Log()
    script = turn(calls=[("call_1", "lookup", ARGS_BA)])
    result = halt(style, path, script, lambda _: lookup(), log=log)
    request = relay_request(style, generated_id(result), [("call_1", "lookup", ARGS_BA)])
    assert result["pending"] == request
    assert result["status"] == "pending"
    assert result["text"] == relay_prompt("lookup")
    assert "limit" not in result
    assert result["messages"] == [user("go"), assistant(style, script)] + results(
        style, [("call_1", relay_prompt("lookup"), True)])
    assert log.tool_events() == [{"event": "tool", "tool": "lookup", "source": "relay",
                                  "isError": False, "pending": True}]
    assert log.after == [], "afterTool is not called on a relay suspension"


@rule("relay.calls-in-one-request", "relay.call-id-stamped", "halt.later-suspensions-dropped",
      "relay.prompt-text")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_three_relay_calls_ride_one_request(style: str, path: str) -> None:
    calls = [("call_1", "lookup", ARGS_BA), ("call_2", "fetch", '{"a": 5}'),
             ("call_3", "lookup", '{ "a": 7 }')]
    script = turn(calls=calls)
    result = halt(style, path, script, lambda _: lookup(), lambda _: lookup("fetch"))
    assert result["pending"] == relay_request(style, generated_id(result), calls)
    assert result["text"] == relay_prompt("lookup")
    assert result["messages"][2:] == results(style, [("call_1", relay_prompt("lookup"), True)])
    assert result["toolCallCount"] == 1


@rule("relay.calls-in-one-request", "halt.transcript", "relay.alongside-real-tools")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_real_tool_then_relay(style: str, path: str) -> None:
    log = Log()
    script = turn(calls=[("call_1", "weather", ARGS_BA), ("call_2", "lookup", '{"a": 3}')])
    result = halt(style, path, script, lambda lg: real_tool(lg, "weather", "sunny"),
                  lambda _: lookup(), log=log)
    assert result["pending"] == relay_request(style, generated_id(result),
                                              [("call_2", "lookup", '{"a": 3}')])
    assert result["messages"] == [user("go"), assistant(style, script)] + results(
        style, [("call_1", "sunny", False), ("call_2", relay_prompt("lookup"), True)])
    assert log.ran("weather") == 1


@rule("halt.later-suspensions-dropped", "halt.transcript", "relay.alongside-real-tools")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_relay_then_real_tool(style: str, path: str) -> None:
    log = Log()
    script = turn(calls=[("call_1", "lookup", ARGS_BA), ("call_2", "weather", '{"a": 3}')])
    result = halt(style, path, script, lambda _: lookup(),
                  lambda lg: real_tool(lg, "weather", "sunny"), log=log)
    assert result["pending"] == relay_request(style, generated_id(result),
                                              [("call_1", "lookup", ARGS_BA)])
    assert result["messages"][2:] == results(style, [("call_1", relay_prompt("lookup"), True)])
    assert log.ran("weather") == 1, "the real tool ran; only its result is dropped"
    assert result["toolCallCount"] == 1


@rule("relay.non-relay-first-uncontaminated", "susp.first-in-order")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_auth_first_is_surfaced_alone(style: str, path: str) -> None:
    script = turn(calls=[("call_1", "signin", ARGS_BA), ("call_2", "lookup", '{"a": 3}')])
    result = halt(style, path, script,
                  lambda lg: suspending_tool(lg, "signin", "auth-1", "Sign in",
                                             url="https://auth.test/x", delay=0.1),
                  lambda _: lookup())
    assert result["pending"] == SIGNIN, "no relay calls leak into a non-relay Request"
    assert result["text"] == "Sign in"
    assert result["messages"][2:] == results(style, [("call_1", "Sign in", True)])


@rule("relay.calls-in-one-request", "halt.later-suspensions-dropped")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_relay_first_drops_later_auth(style: str, path: str) -> None:
    script = turn(calls=[("call_1", "lookup", ARGS_BA), ("call_2", "signin", '{"a": 3}')])
    result = halt(style, path, script, lambda _: lookup(),
                  lambda lg: suspending_tool(lg, "signin", "auth-1", "Sign in"))
    assert result["pending"] == relay_request(style, generated_id(result),
                                              [("call_1", "lookup", ARGS_BA)])
    assert result["messages"][2:] == results(style, [("call_1", relay_prompt("lookup"), True)])


@rule("relay.calls-in-one-request")
@pytest.mark.parametrize("style", STYLES)
def test_relay_calls_around_an_auth_all_ride_the_request(style: str) -> None:
    """All the turn's relay calls, in call order, even with a non-relay suspension between."""
    calls = [("call_1", "lookup", ARGS_BA), ("call_2", "signin", '{"a": 3}'),
             ("call_3", "lookup", '{"a": 4}')]
    result = halt(style, "run", turn(calls=calls), lambda _: lookup(),
                  lambda lg: suspending_tool(lg, "signin", "auth-1", "Sign in"))
    assert result["pending"] == relay_request(style, generated_id(result),
                                              [calls[0], calls[2]])


@rule("relay.calls-in-one-request")
@pytest.mark.parametrize("style", STYLES)
def test_call_order_is_deterministic(style: str) -> None:
    """Later relay calls finish first; data.calls stays in call order, run after run."""
    calls = [("call_1", "slow", ARGS_BA), ("call_2", "lookup", '{"a": 5}')]

    def slow(_: Log) -> Any:
        base = relay_tool("slow", "slow relay", AB_SCHEMA)

        async def execute(args: dict[str, Any], ctx: Any) -> Any:
            await asyncio.sleep(0.05)
            return await base.execute(args, ctx)

        return type(base)(name=base.name, description=base.description,
                          input_schema=base.input_schema, execute=execute, source=base.source)

    for _ in range(3):
        result = halt(style, "run", turn(calls=calls), slow, lambda _: lookup())
        got = result["pending"]
        assert [c["id"] for c in got["data"]["calls"]] == ["call_1", "call_2"]
        assert got["prompt"] == relay_prompt("slow")

"""The halted-tool transcript rule: after a durable halt the transcript holds the assistant
turn with all its calls, the results of calls before the halted one and the halted call's
placeholder — nothing of later calls, suspending or not."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hostkit import PATHS, Log, drive, make_client, real_tool, suspending_tool, toolkit
from scripted import ARGS_BA, STYLES, assistant, fake_provider, final, results, turn, user

rule = pytest.mark.rule

FOUR = turn(calls=[("c1", "real1", ARGS_BA), ("c2", "ask1", ARGS_BA),
                   ("c3", "ask2", ARGS_BA), ("c4", "real2", '{"a": 1}')])


def four_call_kit(log: Log) -> Any:
    # real1 is the slowest and real2 the fastest, so completion order is not call order.
    return toolkit(real_tool(log, "real1", "real-out", delay=0.15),
                   suspending_tool(log, "ask1", "q-1", "P1", kind="question", delay=0.05),
                   suspending_tool(log, "ask2", "q-2", "P2", kind="question"),
                   real_tool(log, "real2", "real2-out"))


@rule("halt.transcript", "halt.later-suspensions-dropped", "halt.run-result",
      "susp.first-in-order", "susp.placeholder")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_four_call_halt_exact_transcript(style: str, path: str) -> None:
    log = Log()

    async def go() -> Any:
        client = make_client(style, on_metric=log.on_metric, hooks=log.hooks())
        return await drive(client, path, "go", await four_call_kit(log))

    with fake_provider(style, [FOUR, final()]) as llm:
        outcome = asyncio.run(go())
    assert llm.call_count == 1
    result = outcome.result
    assert result["messages"] == [user("go"), assistant(style, FOUR)] + results(
        style, [("c1", "real-out", False), ("c2", "P1", True)])
    assert result["status"] == "pending"
    assert result["pending"] == {"id": "q-1", "kind": "question", "prompt": "P1"}
    assert result["text"] == "P1"
    assert "limit" not in result
    assert result["toolCallCount"] == 2, "calls after the halted one leave RunResult.toolCalls"
    assert result["turns"] == 1
    # Every call ran (side effects happened), every suspension emitted its pending marker.
    assert sorted(n for n, _, _ in log.executions) == ["ask1", "ask2", "real1", "real2"]
    events = sorted(log.tool_events(), key=lambda e: e["tool"])
    assert events == [
        {"event": "tool", "tool": "ask1", "source": "native", "isError": False, "pending": True},
        {"event": "tool", "tool": "ask2", "source": "native", "isError": False, "pending": True},
        {"event": "tool", "tool": "real1", "source": "native", "isError": False},
        {"event": "tool", "tool": "real2", "source": "native", "isError": False},
    ]
    # afterTool runs for real results only, never for a suspension.
    after = {e["name"] for e in log.after}
    assert "real1" in after and not after & {"ask1", "ask2"}


@rule("halt.transcript", "halt.later-suspensions-dropped")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_halt_on_first_call_keeps_nothing_after_it(style: str, path: str) -> None:
    log = Log()
    script = turn(calls=[("c1", "ask1", ARGS_BA), ("c2", "real1", ARGS_BA)])

    async def go() -> Any:
        kit = await toolkit(suspending_tool(log, "ask1", "q-1", "P1", delay=0.05),
                            real_tool(log, "real1", "real-out"))
        return await drive(make_client(style), path, "go", kit)

    with fake_provider(style, [script]):
        outcome = asyncio.run(go())
    assert outcome.result["messages"] == [user("go"), assistant(style, script)] + results(
        style, [("c1", "P1", True)])
    assert outcome.result["toolCallCount"] == 1


@rule("halt.transcript", "halt.run-result")
@pytest.mark.parametrize("style", STYLES)
def test_halt_in_a_later_turn_keeps_earlier_turns(style: str) -> None:
    log = Log()
    first = turn(text="step one", calls=[("c1", "real1", ARGS_BA)], usage=(2, 3))
    second = turn(calls=[("c2", "ask1", ARGS_BA)], usage=(4, 6))

    async def go() -> Any:
        kit = await toolkit(real_tool(log, "real1", "real-out"),
                            suspending_tool(log, "ask1", "q-1", "P1"))
        return await make_client(style).run("go", toolkit=kit)

    with fake_provider(style, [first, second]):
        result = asyncio.run(go())
    assert result.messages == [
        user("go"), assistant(style, first), *results(style, [("c1", "real-out", False)]),
        assistant(style, second), *results(style, [("c2", "P1", True)])]
    assert (result.status, result.text, result.turns, result.limit) == ("pending", "P1", 2, None)
    assert result.usage == {"promptTokens": 6, "completionTokens": 9, "totalTokens": 15}

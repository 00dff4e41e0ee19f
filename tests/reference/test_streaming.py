"""Stream events: neutral shapes, the pinned order (tool_call before execution, a call's
pending before its waitFor and its tool_result, usage only before a final done, done
last), and that the stream and run paths give the same transcript and RunResult."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hostkit import Log, drive, make_client, real_tool, suspending_tool, toolkit
from scripted import AB_SCHEMA, ARGS_BA, STYLES, fake_provider, final, relay_request, turn

from reference_py import Answer, Request, ToolContext, ToolResult, define_tool, relay_tool

rule = pytest.mark.rule


def non_text(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] != "text"]


@rule("stream.tool-call-events-first", "stream.done-last", "stream.usage-before-done",
      "loop.sse-openai", "loop.sse-anthropic", "stream.event-fields")
@pytest.mark.parametrize("style", STYLES)
def test_event_sequence_of_a_tool_loop(style: str) -> None:
    timeline: list[str] = []
    script = turn(text="Let me look.", calls=[("call_1", "alpha", ARGS_BA),
                                             ("call_2", "beta", '{"a": 1}')])

    def tool(name: str) -> Any:
        async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            timeline.append(f"exec {name}")
            return ToolResult(output=f"{name}-out")
        return define_tool(name=name, description=name, input_schema=AB_SCHEMA, execute=execute)

    async def go() -> list[dict[str, Any]]:
        kit = await toolkit(tool("alpha"), tool("beta"))
        events = []
        async for event in make_client(style).stream("go", toolkit=kit):
            timeline.append(event["type"])
            events.append(event)
        return events

    with fake_provider(style, [script, final("all done", usage=(7, 11))]):
        events = asyncio.run(go())
    assert "".join(e["delta"] for e in events if e["type"] == "text") == "Let me look.all done"
    shaped = non_text(events)
    assert shaped[:2] == [
        {"type": "tool_call", "id": "call_1", "name": "alpha", "args": {"b": 2, "a": 1}},
        {"type": "tool_call", "id": "call_2", "name": "beta", "args": {"a": 1}}]
    assert shaped[2:4] == [
        {"type": "tool_result", "id": "call_1", "name": "alpha", "output": "alpha-out",
         "isError": False},
        {"type": "tool_result", "id": "call_2", "name": "beta", "output": "beta-out",
         "isError": False}]
    assert [e["type"] for e in shaped[4:]] == ["usage", "done"]
    summed = {"promptTokens": 10, "completionTokens": 16, "totalTokens": 26}
    assert shaped[4] == {"type": "usage", "usage": summed}
    assert shaped[5]["result"]["usage"] == summed
    assert shaped[5]["result"]["status"] == "done"
    first_exec = min(timeline.index("exec alpha"), timeline.index("exec beta"))
    tool_call_positions = [i for i, t in enumerate(timeline) if t == "tool_call"]
    assert max(tool_call_positions) < first_exec, f"tool_call events after execution: {timeline}"


@rule("stream.pending-event", "stream.done-last", "stream.usage-before-done",
      "stream.tool-call-events-first")
@pytest.mark.parametrize("style", STYLES)
def test_durable_halt_events(style: str) -> None:
    log = Log()
    script = turn(calls=[("call_1", "signin", ARGS_BA)])

    async def go() -> list[dict[str, Any]]:
        kit = await toolkit(suspending_tool(log, "signin", "auth-1", "Sign in"))
        return (await drive(make_client(style), "stream", "go", kit)).events

    with fake_provider(style, [script]):
        events = asyncio.run(go())
    types = [e["type"] for e in events]
    assert "usage" not in types, "a halt has no usage event"
    assert types[0] == "tool_call" and types[-1] == "done"
    pend = [e for e in events if e["type"] == "pending"]
    assert pend == [{"type": "pending", "request": {"id": "auth-1", "kind": "authorization",
                                                    "prompt": "Sign in"}}]
    assert events[-1]["result"]["status"] == "pending"


@rule("stream.pending-event", "stream.done-last", "stream.usage-before-done")
@pytest.mark.parametrize("style", STYLES)
def test_pending_before_waitfor_and_before_tool_result(style: str) -> None:
    timeline: list[tuple[str, Any]] = []
    log = Log()
    script = turn(calls=[("call_1", "real1", ARGS_BA), ("call_2", "signin", ARGS_BA)])

    def wait_for(request: Request) -> Answer:
        timeline.append(("waitFor", request.id))
        return Answer(id=request.id, ok=True, data={"token": "T"})

    async def go() -> None:
        kit = await toolkit(real_tool(log, "real1", "r"),
                            suspending_tool(log, "signin", "auth-1", "Sign in"))
        async for event in make_client(style, wait_for=wait_for).stream("go", toolkit=kit):
            timeline.append((event["type"], event.get("id") or event.get("request", {}).get("id")))

    with fake_provider(style, [script, final()]):
        asyncio.run(go())
    pending_at = timeline.index(("pending", "auth-1"))
    assert pending_at < timeline.index(("waitFor", "auth-1"))
    assert pending_at < timeline.index(("tool_result", "call_2"))
    assert [t for t, _ in timeline][-2:] == ["usage", "done"]


@rule("stream.pending-event", "stream.pending-mutual-order", "relay.inprocess-one-callback-per-call",
      "stream.event-fields")
@pytest.mark.parametrize("style", STYLES)
def test_relay_pending_events_in_process(style: str) -> None:
    """Each relay call gets its own pending event before its waitFor; their mutual order is
    not asserted (unpinned)."""
    calls = [("call_1", "lookup", ARGS_BA), ("call_2", "lookup", '{"a": 5}')]
    timeline: list[tuple[str, Any]] = []

    asked: dict[str, dict[str, Any]] = {}

    async def wait_for(request: Request) -> Answer:
        call_id = request.data["calls"][0]["id"]
        asked[call_id] = request.to_wire()
        timeline.append(("waitFor", call_id))
        return Answer(id=request.id, ok=True, data={"output": "x"})

    async def go() -> list[dict[str, Any]]:
        kit = await toolkit(relay_tool("lookup", "d", AB_SCHEMA))
        events = []
        async for event in make_client(style, wait_for=wait_for).stream("go", toolkit=kit):
            events.append(event)
            if event["type"] == "pending":
                timeline.append(("pending", event["request"]["data"]["calls"][0]["id"]))
            elif event["type"] == "tool_result":
                timeline.append(("tool_result", event["id"]))
        return events

    with fake_provider(style, [turn(calls=calls), final()]):
        events = asyncio.run(go())
    pendings = {e["request"]["data"]["calls"][0]["id"]: e["request"]
                for e in events if e["type"] == "pending"}
    assert sorted(pendings) == ["call_1", "call_2"]
    for call in calls:
        got = pendings[call[0]]
        assert got == relay_request(style, got["id"], [call])
        assert got == asked[call[0]], "the pending event carries the Request given to waitFor"
        assert timeline.index(("pending", call[0])) < timeline.index(("waitFor", call[0]))
        assert timeline.index(("pending", call[0])) < timeline.index(("tool_result", call[0]))


def normalized(result: dict[str, Any]) -> dict[str, Any]:
    out = dict(result)
    if "pending" in out and out["pending"]["kind"] == "tool_call":
        out["pending"] = {**out["pending"], "id": "<generated>"}
    return out


SCENARIOS = {
    "tool-loop": ([turn(text="hm", calls=[("c1", "real1", ARGS_BA)]), final()], "real1"),
    "halt": ([turn(calls=[("c1", "real1", ARGS_BA), ("c2", "signin", ARGS_BA),
                          ("c3", "lookup", ARGS_BA)])], "real1"),
    "relay-halt": ([turn(calls=[("c1", "lookup", ARGS_BA), ("c2", "lookup", '{"a": 1}')])],
                   "lookup"),
}


@rule("stream.same-observables")
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
@pytest.mark.parametrize("style", STYLES)
def test_stream_and_run_give_the_same_result(style: str, scenario: str) -> None:
    scripts, _ = SCENARIOS[scenario]
    observed: dict[str, Any] = {}

    async def go(log: Log, path: str) -> Any:
        kit = await toolkit(real_tool(log, "real1", "r1"),
                            suspending_tool(log, "signin", "auth-1", "Sign in"),
                            relay_tool("lookup", "d", AB_SCHEMA))
        client = make_client(style, on_metric=log.on_metric)
        return await drive(client, path, "go", kit)

    for path in ("run", "stream"):
        log = Log()
        with fake_provider(style, scripts) as llm:
            outcome = asyncio.run(go(log, path))
            messages_sent = [b["messages"] for b in llm.bodies]
        observed[path] = (normalized(outcome.result), messages_sent,
                          sorted(log.tool_events(), key=repr))
    assert observed["stream"] == observed["run"]


@rule("stream.halt-events", "stream.pending-on-halt", "stream.event-fields", "halt.transcript")
@pytest.mark.parametrize("style", STYLES)
def test_halt_emits_no_tool_result_for_the_halted_call_or_later(style: str) -> None:
    log = Log()
    script = turn(calls=[("c1", "real1", ARGS_BA), ("c2", "lookup", ARGS_BA),
                         ("c3", "signin", ARGS_BA), ("c4", "lookup", '{"a": 1}'),
                         ("c5", "real2", ARGS_BA)])

    async def go() -> Any:
        kit = await toolkit(real_tool(log, "real1", "r1", delay=0.05),
                            relay_tool("lookup", "d", AB_SCHEMA),
                            suspending_tool(log, "signin", "auth-1", "Sign in"),
                            real_tool(log, "real2", "r2"))
        return await drive(make_client(style), "stream", "go", kit)

    with fake_provider(style, [script]):
        outcome = asyncio.run(go())
    events = outcome.events
    result = outcome.result
    surfaced = result["pending"]
    assert surfaced == relay_request(style, surfaced["id"], [("c2", "lookup", ARGS_BA),
                                                             ("c4", "lookup", '{"a": 1}')])
    results_seen = [e for e in events if e["type"] == "tool_result"]
    assert results_seen in ([], [{"type": "tool_result", "id": "c1", "name": "real1",
                                  "output": "r1", "isError": False}])
    pendings = [e["request"] for e in events if e["type"] == "pending"]
    assert surfaced["id"] in {p["id"] for p in pendings}
    assert "usage" not in [e["type"] for e in events]
    assert events[-1] == {"type": "done", "result": result}
    # Advisory (stream.pending-on-halt): the reference emits one pending event, the surfaced one.
    assert pendings == [surfaced]

"""Byte-identical keys: what the reference emits (RunResult wire, transcripts returned and
stored, tool metric events, stream events, Requests and data.calls entries) validates raw
against the project's JSON Schemas."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hostkit import PATHS, Log, drive, make_client, real_tool, suspending_tool, toolkit
from scripted import AB_SCHEMA, ARGS_BA, STYLES, fake_provider, final, turn

from reference_py import Answer, InMemoryStore, Request, relay_tool
from toolnexus_conformance.helpers.schemas import check

rule = pytest.mark.rule

MIXED = turn(text="thinking", calls=[("c1", "real1", ARGS_BA), ("c2", "lookup", ARGS_BA),
                                     ("c3", "signin", ARGS_BA), ("c4", "lookup", '{"a": 1}')])


def kit_tools(log: Log) -> list[Any]:
    return [real_tool(log, "real1", "r1"), relay_tool("lookup", "client side", AB_SCHEMA),
            suspending_tool(log, "signin", "auth-1", "Sign in", url="https://auth.test/x",
                            kind="authorization")]


def in_process_answer(request: Request) -> Answer:
    if request.kind == "tool_call":
        return Answer(id=request.id, ok=True, data={"output": "relayed"})
    return Answer(id=request.id, ok=True, data={"token": "T"})


async def collect(style: str, path: str, in_process: bool) -> dict[str, Any]:
    log = Log()
    store = InMemoryStore()
    options: dict[str, Any] = {"on_metric": log.on_metric, "store": store}
    if in_process:
        options["wait_for"] = in_process_answer
    client = make_client(style, **options)
    kit = await toolkit(*kit_tools(log))
    outcome = await drive(client, path, "go", kit)
    results = [outcome.result]
    if not in_process:
        halted = outcome.result
        pending_request = Request.from_wire(halted["pending"])
        resumed = await client.run_with_answer(
            toolkit=kit, history=halted["messages"], pending=pending_request,
            answer=Answer(id=pending_request.id, ok=True, data={"results": [
                {"id": "c2", "output": "two", "isError": False},
                {"id": "c4", "output": "four", "isError": True}]}))
        results.append(resumed.to_wire())
    asked = await client.ask("again", toolkit=kit, id="conv")
    results.append(asked.to_wire())
    return {"results": results, "events": outcome.events, "metrics": log.metrics,
            "stored": await store.get("conv")}


@pytest.fixture(scope="module")
def observed() -> dict[tuple[str, str, bool], dict[str, Any]]:
    out = {}
    for style in STYLES:
        for path in PATHS:
            for in_process in (False, True):
                turns = [MIXED, final("done")] + ([final("asked")] if in_process else
                                                  [final("resumed"), final("asked")])
                with fake_provider(style, turns):
                    out[(style, path, in_process)] = asyncio.run(collect(style, path, in_process))
    return out


@rule("keys.run-result", "susp.request-keys", "relay.call-entry-keys")
def test_run_results_validate(observed: dict[Any, dict[str, Any]]) -> None:
    statuses = set()
    for seen in observed.values():
        for result in seen["results"]:
            check("run-result", result)
            statuses.add(result["status"])
            if "pending" in result:
                check("request", result["pending"])
                for entry in (result["pending"].get("data") or {}).get("calls", []):
                    check("relay-call", entry)
    assert statuses == {"done", "pending"}


@rule("keys.transcript", "store.verbatim-round-trip")
def test_transcripts_validate(observed: dict[Any, dict[str, Any]]) -> None:
    for (style, _, _), seen in observed.items():
        schema = f"{style}-message"
        for result in seen["results"]:
            for message in result["messages"]:
                check(schema, message)
        assert seen["stored"], "ask saved nothing"
        for message in seen["stored"]:
            check(schema, message)


@rule("keys.tool-event", "susp.not-a-tool-error")
def test_tool_events_validate(observed: dict[Any, dict[str, Any]]) -> None:
    pending_seen = False
    for seen in observed.values():
        tool_events = [m for m in seen["metrics"] if m.get("event") == "tool"]
        assert tool_events
        for event in tool_events:
            check("tool-event", event)
            pending_seen = pending_seen or event.get("pending") is True
    assert pending_seen


@rule("keys.stream-events", "stream.event-fields")
def test_stream_events_validate(observed: dict[Any, dict[str, Any]]) -> None:
    types = set()
    for (_, path, _), seen in observed.items():
        if path != "stream":
            continue
        for event in seen["events"]:
            check("stream-event", event)
            types.add(event["type"])
    assert types == {"text", "tool_call", "tool_result", "usage", "pending", "done"}

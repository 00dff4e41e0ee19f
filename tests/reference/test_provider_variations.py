"""What the provider sends and what the host asks at an edge, against the reference over real
loopback HTTP (the harness's fake provider with scripted ``wire`` variations): chunk
boundaries anywhere, tool-call deltas out of index order, with gaps or without index, usage
without a usable total, content shapes, undeclared tools, maxTurns 0 and resumes of
transcripts that are not halted."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hostkit import Log, drive, real_tool, toolkit
from scripted import API_KEY, MODEL, STYLES

from reference_py import Answer, Request, ResumeError, create_client, relay_tool
from toolnexus_conformance.fake_provider import FakeProvider, Session

rule = pytest.mark.rule
ARGS = '{ "b": 2,  "a": "Zürich ☕" }'


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProvider]:
    with FakeProvider() as running:
        yield running


def client(session: Session, **options: Any) -> Any:
    return create_client(base_url=session.base_url, style=session.style, model=MODEL, api_key=API_KEY, **options)


def call(call_id: str, name: str = "alpha", arguments: str = ARGS) -> dict[str, str]:
    return {"id": call_id, "name": name, "arguments": arguments}


def replayed_calls(session: Session, request: int) -> list[str]:
    messages = session.bodies()[request]["messages"]
    assistant = next(m for m in messages if m["role"] == "assistant")
    return [c["id"] for c in assistant["tool_calls"]]


@rule("loop.sse-openai", "loop.sse-anthropic")
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("split", [{"utf8": True, "pauseMs": 0}, {"every": 3, "pauseMs": 0}, {"at": [1, 9, 10, 64]}])
def test_chunk_boundaries_change_nothing(provider: FakeProvider, style: str, split: dict[str, Any]) -> None:
    turns = [{"text": "Ich schaue ☕", "toolCalls": [call("c1")]}, {"text": "Fertig: 東京 🚀"}]
    plain = provider.session(turns, style)
    cut = provider.session([{**t, "wire": {"split": split}} for t in turns], style)
    log = Log()

    async def both() -> tuple[Any, Any]:
        kit = await toolkit(real_tool(log, "alpha", "ok ❄"))
        return (await drive(client(plain), "stream", "go", kit), await drive(client(cut), "stream", "go", kit))

    whole, pieces = asyncio.run(both())
    assert len(cut.replies[0].events or ()) > 3, "the stream really was cut"
    assert pieces.result == whole.result and pieces.events == whole.events
    assert pieces.result["text"] == "Fertig: 東京 🚀"
    assert log.executions[1][1] == {"b": 2, "a": "Zürich ☕"}


@rule("loop.sse-openai")
@pytest.mark.parametrize("wire", [{"toolCallIndexes": [2, 7]}, {"toolCallIndexes": [5, 1], "toolCallOrder": "interleaved"}])
def test_index_gaps_and_interleaving_assemble_in_index_order(provider: FakeProvider, wire: dict[str, Any]) -> None:
    session = provider.session([{"toolCalls": [call("c1"), call("c2", arguments='{"a": 1}')], "wire": wire}, {"text": "done"}], "openai")
    indexes = wire["toolCallIndexes"]
    asyncio.run(drive(client(session), "stream", "go", asyncio.run(toolkit(real_tool(Log(), "alpha", "ok")))))
    by_index = [cid for _, cid in sorted(zip(indexes, ["c1", "c2"], strict=True))]
    assert replayed_calls(session, 1) == by_index


@rule("loop.sse-openai")
def test_a_delta_without_index_is_index_zero(provider: FakeProvider) -> None:
    session = provider.session([{"toolCalls": [call("c1")], "wire": {"omitToolCallIndex": True}}, {"text": "done"}], "openai")
    log = Log()
    asyncio.run(drive(client(session), "stream", "go", asyncio.run(toolkit(real_tool(log, "alpha", "ok")))))
    assert replayed_calls(session, 1) == ["c1"]
    assert session.bodies()[1]["messages"][1]["tool_calls"][0]["function"]["arguments"] == ARGS


@rule("loop.sse-openai-delta-order")
def test_reversed_deltas_are_ordered_by_index(provider: FakeProvider) -> None:
    session = provider.session([{"toolCalls": [call("c1"), call("c2")], "wire": {"toolCallOrder": "reversed"}}, {"text": "done"}], "openai")
    outcome = asyncio.run(drive(client(session), "stream", "go", asyncio.run(toolkit(real_tool(Log(), "alpha", "ok")))))
    assert replayed_calls(session, 1) == ["c1", "c2"], "the reference orders calls by index, not by arrival"
    assert [e["id"] for e in outcome.events if e["type"] == "tool_call"] == ["c1", "c2"]


@rule("loop.usage-summed", "loop.usage-total-missing")
@pytest.mark.parametrize("path", ["run", "stream"])
@pytest.mark.parametrize(("shape", "total"), [("absent", 0), ("no-total", 9), ("zero-total", 9), ("full", 9)])
def test_usage_shapes(provider: FakeProvider, path: str, shape: str, total: int) -> None:
    turn = {"text": "x", "usage": {"input": 4, "output": 5}, "wire": {"usage": shape}}
    session = provider.session([turn], "openai")
    outcome = asyncio.run(drive(client(session), path, "go"))
    want = {"promptTokens": 4, "completionTokens": 5} if shape != "absent" else {"promptTokens": 0, "completionTokens": 0}
    assert outcome.result["usage"] == {**want, "totalTokens": total}


@rule("loop.assistant-content-null")
@pytest.mark.parametrize(("shape", "stored"), [("null", {"content": None}), ("empty", {"content": ""}), ("absent", {})])
def test_json_content_is_kept_as_received(provider: FakeProvider, shape: str, stored: dict[str, Any]) -> None:
    session = provider.session([{"toolCalls": [call("c1")], "wire": {"content": shape}}, {"text": "done"}], "openai")
    outcome = asyncio.run(drive(client(session), "run", "go", asyncio.run(toolkit(real_tool(Log(), "alpha", "ok")))))
    assistant = outcome.result["messages"][1]
    assert {k: v for k, v in assistant.items() if k == "content"} == stored


@rule("loop.assistant-content-null")
@pytest.mark.parametrize("shape", ["null", "empty", "absent"])
def test_streamed_content_without_text_is_null_and_no_text_event(provider: FakeProvider, shape: str) -> None:
    session = provider.session([{"toolCalls": [call("c1")], "wire": {"content": shape}}, {"text": "done"}], "openai")
    outcome = asyncio.run(drive(client(session), "stream", "go", asyncio.run(toolkit(real_tool(Log(), "alpha", "ok")))))
    assert outcome.result["messages"][1]["content"] is None
    assert [e["delta"] for e in outcome.events if e["type"] == "text"] == ["do", "ne"]


@rule("loop.undeclared-tool-call")
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("path", ["run", "stream"])
def test_undeclared_tool_gets_unknown_tool_and_the_loop_goes_on(provider: FakeProvider, style: str, path: str) -> None:
    session = provider.session([{"toolCalls": [call("c1", "ghost"), call("c2")]}, {"text": "done"}], style)
    log = Log()

    async def go() -> Any:
        return await drive(client(session, on_metric=log.on_metric), path, "go", await toolkit(real_tool(log, "alpha", "ok")))

    outcome = asyncio.run(go())
    assert outcome.result["status"] == "done" and [n for n, _, _ in log.executions] == ["alpha"]
    messages = session.bodies()[1]["messages"]
    if style == "openai":
        assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "Unknown tool: ghost"}
    else:
        assert messages[2]["content"][0] == {"type": "tool_result", "tool_use_id": "c1", "content": "Unknown tool: ghost", "is_error": True}
    assert {"event": "tool", "tool": "ghost", "source": "custom", "isError": True} in log.tool_events()


@rule("loop.max-turns-zero")
@pytest.mark.parametrize("path", ["run", "stream"])
def test_max_turns_zero_sends_nothing(provider: FakeProvider, path: str) -> None:
    session = provider.session([{"text": "never served"}], "anthropic")
    outcome = asyncio.run(drive(client(session, max_turns=0), path, "go"))
    assert session.requests == []
    assert (outcome.result["status"], outcome.result.get("limit"), outcome.result["text"]) == ("incomplete", "maxTurns", "")


CALL_MSG = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "w1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}


@rule("resume.not-halted-transcript")
@pytest.mark.parametrize("tail", [
    [{"role": "tool", "tool_call_id": "w1", "content": "4°C"}, {"role": "assistant", "content": "It is 4°C."}],
    [{"role": "tool", "tool_call_id": "w1", "content": "3°C (answered before)"}],
], ids=["completed", "already-answered"])
def test_resume_of_a_transcript_that_is_not_halted_is_refused(provider: FakeProvider, tail: list[dict[str, Any]]) -> None:
    session = provider.session([{"text": "never served"}], "openai")
    pending = Request(id="pnd-1", kind="tool_call", prompt="relay tool call weather to the caller for execution",
                      data={"calls": [{"id": "w1", "name": "weather", "input": {}, "arguments": "{}"}]})
    history = [{"role": "user", "content": "weather?"}, CALL_MSG, *tail]

    async def go() -> Any:
        kit = await toolkit(relay_tool("weather", "the weather", {"type": "object"}))
        return await client(session).run_with_answer(kit, history=history, pending=pending,
                                                     answer=Answer(id="pnd-1", ok=True, data={"output": "5°C"}))

    with pytest.raises(ResumeError):
        asyncio.run(go())
    assert session.requests == []

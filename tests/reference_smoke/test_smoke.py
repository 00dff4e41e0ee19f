"""Smoke tests of reference_py against a respx-mocked provider (the implementer's own
checks; the thorough rule-by-rule tests live in tests/reference/)."""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import sys
from typing import Any

import httpx
import pytest
import respx

from reference_py import (
    Answer,
    ProviderError,
    Request,
    ResumeError,
    ToolkitError,
    ToolResult,
    WireError,
    create_client,
    create_toolkit,
    define_tool,
    pending,
    relay_tool,
)


def synchronous(test):  # noqa: ANN001, ANN201 - pytest has no async plugin here
    @functools.wraps(test)
    def run() -> None:
        asyncio.run(test())

    return run


BASE = "http://127.0.0.1:8400/v1"
RAW = '{ "b": 2,  "a": 1 }'


def openai_turn(*calls: tuple[str, str, str], text: str | None = None) -> httpx.Response:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in calls
        ]
    usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    return httpx.Response(200, json={"choices": [{"message": message}], "usage": usage})


def anthropic_turn(*blocks: dict[str, Any]) -> httpx.Response:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return httpx.Response(
        200,
        json={"content": list(blocks), "stop_reason": stop, "usage": {"input_tokens": 3, "output_tokens": 5}},
    )


def bodies(route: respx.Route) -> list[dict[str, Any]]:
    return [json.loads(call.request.content) for call in route.calls]


def real_tool(name: str = "real", output: str = "real-out"):
    return define_tool(name, "a real tool", execute=lambda args, ctx: output)


def auth_tool():
    async def execute(args: dict[str, Any], ctx: Any) -> ToolResult:
        if ctx.answer is None:
            return pending(kind="authorization", prompt="sign in", id="auth-1", url="https://127.0.0.1/login")
        return ToolResult(output="authed:" + str((ctx.answer.data or {}).get("token")))

    return define_tool("auth", "needs sign-in", execute=execute)


@synchronous
async def test_durable_relay_three_calls_then_resume_openai() -> None:
    toolkit = await create_toolkit(extra_tools=[relay_tool("lookup", "d"), relay_tool("fetch", "d")])
    with respx.mock(base_url=BASE) as mock:
        route = mock.post("/chat/completions").mock(
            side_effect=[
                openai_turn(("c1", "lookup", RAW), ("c2", "fetch", "{}"), ("c3", "lookup", '{"a":3}')),
                openai_turn(text="final"),
            ]
        )
        client = create_client(base_url=BASE, model="m", api_key="k")
        halted = await client.run("go", toolkit)
        assert halted.status == "pending"
        request = halted.pending
        assert request.kind == "tool_call"
        assert [c["id"] for c in request.data["calls"]] == ["c1", "c2", "c3"]
        assert request.data["calls"][0]["arguments"] == RAW
        assert request.data["calls"][0]["input"] == {"b": 2, "a": 1}
        assert halted.text == request.prompt == "relay tool call lookup to the caller for execution"
        assert halted.messages[-1] == {"role": "tool", "tool_call_id": "c1", "content": request.prompt}
        assert len(halted.tool_calls) == 1

        saved = json.loads(json.dumps({"m": halted.messages, "p": request.to_wire()}))
        fresh = create_client(base_url=BASE, model="m", api_key="k")
        answer = Answer(
            id=request.id,
            ok=True,
            data={"results": [{"id": "c1", "output": "one"}, {"id": "c3", "output": "three", "isError": True}]},
        )
        done = await fresh.run_with_answer(toolkit, history=saved["m"], pending=saved["p"], answer=answer)
        assert done.status == "done" and done.text == "final"
        sent = bodies(route)[1]["messages"]
        assert sent[-3:] == [
            {"role": "tool", "tool_call_id": "c1", "content": "one"},
            {"role": "tool", "tool_call_id": "c2", "content": "no result supplied on resume for fetch"},
            {"role": "tool", "tool_call_id": "c3", "content": "three"},
        ]
        assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "tool"]


@synchronous
async def test_in_process_relay_callbacks_all_outstanding() -> None:
    outstanding: list[Request] = []
    all_in = asyncio.Event()

    async def wait_for(request: Request) -> Answer:
        outstanding.append(request)
        if len(outstanding) == 3:
            all_in.set()
        await asyncio.wait_for(all_in.wait(), timeout=5)
        call = request.data["calls"][0]
        return Answer(id=request.id, ok=True, data={"output": "out-" + call["id"]})

    toolkit = await create_toolkit(extra_tools=[relay_tool("lookup", "d")])
    with respx.mock(base_url=BASE) as mock:
        route = mock.post("/chat/completions").mock(
            side_effect=[
                openai_turn(("c1", "lookup", RAW), ("c2", "lookup", "{}"), ("c3", "lookup", "{}")),
                openai_turn(text="ok"),
            ]
        )
        client = create_client(base_url=BASE, model="m", api_key="k", wait_for=wait_for)
        result = await client.run("go", toolkit)
    assert result.status == "done"
    assert all(len(r.data["calls"]) == 1 for r in outstanding)
    assert bodies(route)[1]["messages"][-3:] == [
        {"role": "tool", "tool_call_id": f"c{i}", "content": f"out-c{i}"} for i in (1, 2, 3)
    ]


@synchronous
async def test_anthropic_halt_on_auth_keeps_relay_out_and_resume_reexecutes() -> None:
    toolkit = await create_toolkit(extra_tools=[real_tool(), auth_tool(), relay_tool("lookup", "d")])
    metrics: list[dict[str, Any]] = []
    with respx.mock(base_url="http://127.0.0.1:8400") as mock:
        route = mock.post("/v1/messages").mock(
            side_effect=[
                anthropic_turn(
                    {"type": "tool_use", "id": "t1", "name": "real", "input": {}},
                    {"type": "tool_use", "id": "t2", "name": "auth", "input": {}},
                    {"type": "tool_use", "id": "t3", "name": "lookup", "input": {"b": 2, "a": 1}},
                ),
                anthropic_turn({"type": "text", "text": "bye"}),
            ]
        )
        client = create_client(
            base_url="http://127.0.0.1:8400", style="anthropic", model="m", api_key="k", on_metric=metrics.append
        )
        halted = await client.run("go", toolkit)
        assert halted.pending == Request(id="auth-1", kind="authorization", prompt="sign in", url="https://127.0.0.1/login")
        assert halted.messages[-1] == {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "real-out", "is_error": False},
                {"type": "tool_result", "tool_use_id": "t2", "content": "sign in", "is_error": True},
            ],
        }
        first = bodies(route)[0]
        assert "system" not in first and first["max_tokens"] == 4096
        assert route.calls[0].request.headers["x-api-key"] == "k"
        pending_events = [m for m in metrics if m["event"] == "tool" and m.get("pending")]
        assert all(m["isError"] is False for m in pending_events) and len(pending_events) == 2

        answer = Answer(id="auth-1", ok=True, data={"token": "xyz"})
        done = await client.run_with_answer(toolkit, history=halted.messages, pending=halted.pending, answer=answer)
    assert done.text == "bye"
    assert bodies(route)[1]["messages"][-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "real-out", "is_error": False},
        {"type": "tool_result", "tool_use_id": "t2", "content": "authed:xyz", "is_error": False},
        {"type": "tool_result", "tool_use_id": "t3", "content": "no result supplied on resume for lookup", "is_error": True},
    ]


@synchronous
async def test_in_process_declined_and_unresolved() -> None:
    async def stubborn(args: dict[str, Any], ctx: Any) -> ToolResult:
        return pending(kind="approval", prompt="approve?", id="a-" + ctx.call_id)

    toolkit = await create_toolkit(extra_tools=[define_tool("gate", "d", execute=stubborn)])
    answers = {"a-c1": Answer(id="a-c1", ok=False), "a-c2": Answer(id="a-c2", ok=True)}
    with respx.mock(base_url=BASE) as mock:
        route = mock.post("/chat/completions").mock(
            side_effect=[openai_turn(("c1", "gate", "{}"), ("c2", "gate", "{}")), openai_turn(text="x")]
        )
        client = create_client(base_url=BASE, model="m", api_key="k", wait_for=lambda r: answers[r.id])
        await client.run("go", toolkit)
    assert [m["content"] for m in bodies(route)[1]["messages"][-2:]] == [
        "declined/expired: approve?",
        "unresolved: approve?",
    ]


@synchronous
async def test_stream_openai_sse_order_and_store() -> None:
    sse = (
        b'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"lookup","arguments":"{ \\"b\\""}}]}}]}\n\n'
        b'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":": 2 }"}}]}}]}\n\n'
        b'data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\n'
        b"data: [DONE]\n\n"
    )
    final = b'data: {"choices":[{"delta":{"content":"he"}}]}\n\ndata: {"choices":[{"delta":{"content":"llo"}}]}\n\ndata: [DONE]\n\n'
    headers = {"content-type": "text/event-stream"}
    toolkit = await create_toolkit(extra_tools=[relay_tool("lookup", "d")])
    with respx.mock(base_url=BASE) as mock:
        route = mock.post("/chat/completions").mock(
            side_effect=[httpx.Response(200, headers=headers, content=sse), httpx.Response(200, headers=headers, content=final)]
        )
        client = create_client(
            base_url=BASE, model="m", api_key="k", wait_for=lambda r: Answer(id=r.id, ok=True, data={"output": "v"})
        )
        events = [e async for e in client.stream("go", toolkit, id="conv")]
    types = [e["type"] for e in events]
    assert types == ["tool_call", "pending", "tool_result", "text", "text", "usage", "done"]
    assert events[1]["request"]["data"]["calls"][0]["arguments"] == '{ "b": 2 }'
    assert events[-1]["result"]["text"] == "hello"
    assert bodies(route)[0]["stream"] is True and bodies(route)[0]["stream_options"] == {"include_usage": True}
    stored = await client.conversation_store.get("conv")
    assert stored[-1] == {"role": "assistant", "content": "hello"}


@synchronous
async def test_errors_are_one_line() -> None:
    toolkit = await create_toolkit(extra_tools=[relay_tool("lookup", "d")])
    with respx.mock(base_url=BASE) as mock:
        route = mock.post("/chat/completions").mock(
            side_effect=[httpx.Response(200, text="<html>"), httpx.Response(503, text="down")]
        )
        client = create_client(base_url=BASE, model="m", api_key="k")
        with pytest.raises(ProviderError, match="not JSON"):
            await client.run("go")
        with pytest.raises(ProviderError, match="LLM 503: down"):
            await client.run("go")
        request = Request(id="r1", kind="tool_call", prompt="p")
        with pytest.raises(ResumeError, match="does not echo"):
            await client.run_with_answer(toolkit, history=[{"role": "user", "content": "x"}], pending=request, answer=Answer(id="r2", ok=True))
        with pytest.raises(ResumeError, match="no halted assistant turn"):
            await client.run_with_answer(toolkit, history=[{"role": "user", "content": "x"}], pending=request, answer=Answer(id="r1", ok=True))
        assert route.call_count == 2
    with pytest.raises(ToolkitError, match=r"\[bash read\]"):
        await create_toolkit(extra_tools=[relay_tool("read", "d"), relay_tool("bash", "d")])
    with pytest.raises(WireError):
        Answer.from_wire({"id": "x", "ok": "yes"})


@synchronous
async def test_max_turns_and_unknown_tool() -> None:
    with respx.mock(base_url=BASE) as mock:
        mock.post("/chat/completions").mock(
            side_effect=[openai_turn(("c1", "nope", "{}"), text="thinking"), openai_turn(("c2", "nope", "{}"))]
        )
        result = await create_client(base_url=BASE, model="m", api_key="k", max_turns=2).run("go")
    assert (result.status, result.text, result.turns) == ("done", "thinking", 2)
    assert result.messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "Unknown tool: nope"}


def test_relay_off_never_imports_relay() -> None:
    code = (
        "import asyncio, sys, httpx, reference_py as r\n"
        "def reply(req): return httpx.Response(200, json={'choices':[{'message':{'role':'assistant','content':'hi'}}]})\n"
        "async def main():\n"
        "  async with httpx.AsyncClient(transport=httpx.MockTransport(reply)) as h:\n"
        "    c = r.create_client(base_url='http://127.0.0.1:1', model='m', api_key='k', relay=False, http_client=h)\n"
        "    res = await c.run('x', await r.create_toolkit(builtins=True))\n"
        "    assert res.text == 'hi'\n"
        "asyncio.run(main())\n"
        "print('reference_py.relay' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"event: x\ndata: " + json.dumps(e).encode() + b"\n\n" for e in events)


@synchronous
async def test_stream_anthropic_sse_halt_and_hook_raised_pending() -> None:
    tool_turn = _sse(
        {"type": "message_start", "message": {"usage": {"input_tokens": 2, "output_tokens": 0}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "real", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"b": 2,'}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ' "a": 1}'}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 4}},
    )
    seen: list[dict[str, Any]] = []

    def before_tool(event: dict[str, Any]) -> dict[str, Any]:
        return {"result": pending(kind="approval", prompt="approve real?", id="ap-1")}

    async def execute(args: dict[str, Any], ctx: Any) -> str:
        seen.append({"args": args, "answer": ctx.answer})
        return "ran"

    toolkit = await create_toolkit(extra_tools=[define_tool("real", "d", execute=execute)])
    with respx.mock(base_url="http://127.0.0.1:8400") as mock:
        mock.post("/v1/messages").mock(
            return_value=httpx.Response(200, headers={"content-type": "text/event-stream"}, content=tool_turn)
        )
        client = create_client(
            base_url="http://127.0.0.1:8400/v1/", style="anthropic", model="m", api_key="k",
            hooks={"before_tool": before_tool}, system_prompt="be brief",
        )
        events = [e async for e in client.stream("go", toolkit, id="s1")]
    assert [e["type"] for e in events] == ["tool_call", "pending", "done"]
    assert events[0]["args"] == {"b": 2, "a": 1}
    done = events[-1]["result"]
    assert done["status"] == "pending" and done["pending"]["id"] == "ap-1"
    assert done["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "real", "input": {"b": 2, "a": 1}}],
    }
    assert seen == []  # the hook short-circuited the real tool
    stored = await client.conversation_store.get("s1")
    assert stored == done["messages"]

    with respx.mock(base_url="http://127.0.0.1:8400") as mock:
        route = mock.post("/v1/messages").mock(return_value=anthropic_turn({"type": "text", "text": "fin"}))
        resumed = await client.ask_with_answer(
            toolkit, id="s1", pending=Request.from_wire(done["pending"]), answer=Answer(id="ap-1", ok=True)
        )
    assert resumed.text == "fin" and seen[0]["answer"].id == "ap-1"
    sent = bodies(route)[0]
    assert sent["system"] == "be brief"
    assert sent["messages"][-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "ran", "is_error": False}
    ]
    assert (await client.conversation_store.get("s1"))[-1] == {"role": "assistant", "content": [{"type": "text", "text": "fin"}]}

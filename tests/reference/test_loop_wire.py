"""§8 loop wire facts: endpoints, headers, full request bodies, tool results, usage, SSE."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
import respx
from hostkit import PATHS, Log, drive, make_client, real_tool, toolkit
from scripted import (
    AB_SCHEMA,
    API_KEY,
    ARGS_BA,
    MODEL,
    STYLES,
    assistant,
    body,
    declaration,
    fake_provider,
    final,
    results,
    turn,
    user,
)

from reference_py import ProviderError, ToolContext, ToolResult, create_client, define_tool

rule = pytest.mark.rule


def decl(style: str, name: str) -> dict[str, Any]:
    return declaration(style, name, f"the {name} tool", AB_SCHEMA)


@rule("loop.openai-endpoint")
def test_openai_endpoint_and_bearer_key() -> None:
    with fake_provider("openai", [final("hi")]) as llm:
        asyncio.run(make_client("openai").run("go"))
    request = llm.route.calls[0].request
    assert request.method == "POST"
    assert str(request.url) == "http://llm.test/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.headers["content-type"].startswith("application/json")


@rule("loop.anthropic-endpoint")
@pytest.mark.parametrize("base", ["http://llm.test/v1", "http://llm.test/v1/", "http://llm.test"])
def test_anthropic_endpoint_and_headers(base: str) -> None:
    with respx.mock(assert_all_called=False) as mock:
        route = mock.post("http://llm.test/v1/messages").mock(
            return_value=httpx.Response(200, json={
                "id": "m", "type": "message", "role": "assistant", "model": MODEL,
                "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1}}))
        client = create_client(base_url=base, style="anthropic", model=MODEL, api_key=API_KEY)
        asyncio.run(client.run("go"))
    assert route.call_count == 1, "anthropic style must post to <base>/v1/messages"
    request = route.calls[0].request
    assert request.headers["x-api-key"] == API_KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers


@rule("loop.openai-body", "loop.anthropic-body", "loop.stream-body", "loop.user-prompt",
      "loop.model-verbatim", "loop.tool-results-openai", "loop.tool-results-anthropic",
      "loop.final-text", "loop.usage-summed", "loop.sse-openai", "loop.sse-anthropic",
      "loop.anthropic-system-empty", "stream.same-observables", "loop.assistant-turn")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_two_turn_tool_loop_full_bodies(style: str, path: str) -> None:
    log = Log()
    first = turn(text="Let me look.", calls=[("call_1", "alpha", ARGS_BA),
                                             ("call_2", "beta", '{"a": 1}')], usage=(3, 5))
    last = final("all done", usage=(7, 11))
    with fake_provider(style, [first, last]) as llm:
        async def go() -> Any:
            kit = await toolkit(real_tool(log, "alpha", "alpha-out"),
                                real_tool(log, "beta", "beta-out"))
            return await drive(make_client(style), path, "go", kit)
        outcome = asyncio.run(go())
    tools = [decl(style, "alpha"), decl(style, "beta")]
    streaming = path == "stream"
    turn_one = [user("go")]
    turn_two = turn_one + [assistant(style, first)] + results(style, [("call_1", "alpha-out", False),
                                          ("call_2", "beta-out", False)])
    assert llm.bodies == [body(style, turn_one, tools, stream=streaming),
                          body(style, turn_two, tools, stream=streaming)]
    result = outcome.result
    assert result["status"] == "done"
    assert result["text"] == "all done"
    assert result["messages"] == turn_two + [assistant(style, last)]
    assert result["turns"] == 2
    assert result["usage"] == {"promptTokens": 10, "completionTokens": 16, "totalTokens": 26}
    assert result["toolCallCount"] == 2
    assert "pending" not in result and "limit" not in result
    assert sorted(log.executions, key=lambda e: e[0]) == [
        ("alpha", {"b": 2, "a": 1}, None), ("beta", {"a": 1}, None)]
    if streaming:
        text = "".join(e["delta"] for e in outcome.events if e["type"] == "text")
        assert text == "Let me look.all done"


@rule("loop.results-in-call-order")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
def test_calls_run_concurrently_results_in_call_order(style: str, path: str) -> None:
    """alpha (first) only finishes after beta (second) has started: a sequential loop times out."""
    overlapped: list[bool] = []
    script = turn(calls=[("call_1", "alpha", ARGS_BA), ("call_2", "beta", ARGS_BA)])

    async def go() -> Any:
        beta_started = asyncio.Event()

        async def alpha(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            try:
                await asyncio.wait_for(beta_started.wait(), timeout=2)
                overlapped.append(True)
            except TimeoutError:
                overlapped.append(False)
            return ToolResult(output="alpha-out")

        async def beta(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            beta_started.set()
            return ToolResult(output="beta-out")

        kit = await toolkit(define_tool(name="alpha", description="a", input_schema=AB_SCHEMA,
                                        execute=alpha),
                            define_tool(name="beta", description="b", input_schema=AB_SCHEMA,
                                        execute=beta))
        return await drive(make_client(style), path, "go", kit)

    with fake_provider(style, [script, final()]) as llm:
        asyncio.run(go())
    assert overlapped == [True], "tool calls of one turn must run concurrently"
    assert llm.bodies[1]["messages"][2:] == results(
        style, [("call_1", "alpha-out", False), ("call_2", "beta-out", False)])


@rule("loop.tools-omitted-when-empty", "loop.final-text")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("with_kit", [False, True])
def test_no_tools_no_tools_key(style: str, path: str, with_kit: bool) -> None:
    async def go() -> Any:
        kit = await toolkit() if with_kit else None
        return await drive(make_client(style), path, "hello", kit)

    with fake_provider(style, [final("hi there")]) as llm:
        outcome = asyncio.run(go())
    assert llm.bodies == [body(style, [user("hello")], stream=path == "stream")]
    assert outcome.result["status"] == "done"
    assert outcome.result["text"] == "hi there"
    assert outcome.result["messages"] == [user("hello"), assistant(style, final("hi there"))]
    assert outcome.result["turns"] == 1


@rule("loop.system-prompt")
@pytest.mark.parametrize("style", STYLES)
def test_system_prompt_placement(style: str) -> None:
    with fake_provider(style, [final("one"), final("two")]) as llm:
        client = make_client(style, system_prompt="Be terse.")
        first = asyncio.run(client.run("go"))
        asyncio.run(client.run("again", history=first.messages))
    if style == "openai":
        system = {"role": "system", "content": "Be terse."}
        assert llm.bodies[0] == body(style, [system, user("go")])
        # With history nothing is re-added: the history already carries it.
        assert llm.bodies[1] == body(style, [system, user("go"), assistant(style, final("one")),
                                             user("again")])
    else:
        assert llm.bodies[0] == body(style, [user("go")], system="Be terse.")
        assert llm.bodies[1] == body(style, [user("go"), assistant(style, final("one")),
                                             user("again")], system="Be terse.")


@rule("loop.system-prompt", "loop.user-prompt")
def test_openai_system_prompt_not_added_to_foreign_history() -> None:
    history = [user("earlier"), {"role": "assistant", "content": "ok"}]
    with fake_provider("openai", [final("hi")]) as llm:
        asyncio.run(make_client("openai", system_prompt="Be terse.").run("go", history=history))
    assert llm.bodies == [body("openai", history + [user("go")])]


@rule("loop.assistant-content-null", "loop.assistant-turn")
@pytest.mark.parametrize("path", PATHS)
def test_openai_tool_turn_without_text_keeps_null_content(path: str) -> None:
    log = Log()
    script = turn(calls=[("call_1", "alpha", ARGS_BA)])

    async def go() -> Any:
        return await drive(make_client("openai"), path, "go",
                           await toolkit(real_tool(log, "alpha", "x")))

    with fake_provider("openai", [script, final()]):
        outcome = asyncio.run(go())
    assert outcome.result["messages"][1]["content"] is None


@rule("loop.anthropic-system-empty")
@pytest.mark.parametrize("path", PATHS)
def test_anthropic_without_system_prompt_omits_system(path: str) -> None:
    with fake_provider("anthropic", [final()]) as llm:
        asyncio.run(drive(make_client("anthropic"), path, "go"))
    assert "system" not in llm.bodies[0]


@rule("loop.max-turns-exhaustion")
@pytest.mark.parametrize("style", STYLES)
def test_max_turns_exhaustion(style: str) -> None:
    log = Log()
    scripts = [turn(calls=[(f"call_{i}", "alpha", ARGS_BA)]) for i in range(1, 4)]

    async def go() -> Any:
        client = make_client(style, max_turns=2)
        return await client.run("go", toolkit=await toolkit(real_tool(log, "alpha", "x")))

    with fake_provider(style, scripts) as llm:
        result = asyncio.run(go())
    assert llm.call_count == 2
    assert result.turns == 2
    assert (result.status, result.limit, result.text) == ("incomplete", "maxTurns", "")


@rule("loop.openai-endpoint", "loop.anthropic-endpoint")
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("reply", [
    httpx.Response(200, content=b"<html>not json</html>"),
    httpx.Response(503, json={"error": "overloaded"}),
])
def test_bad_provider_reply_is_a_one_line_provider_error(style: str, reply: httpx.Response) -> None:
    with respx.mock(base_url="http://llm.test/v1", assert_all_called=False) as mock:
        mock.post("/chat/completions" if style == "openai" else "/messages").mock(
            return_value=reply)
        with pytest.raises(ProviderError) as caught:
            asyncio.run(make_client(style).run("go"))
    assert "\n" not in str(caught.value).strip()


@rule("loop.assistant-extra-keys", "loop.assistant-turn")
@pytest.mark.parametrize("style", STYLES)
def test_non_streaming_assistant_message_kept_as_received(style: str) -> None:
    """The reference keeps the provider's assistant message verbatim, extra keys included."""
    if style == "openai":
        message = {"role": "assistant", "content": None, "refusal": None,
                   "tool_calls": [{"id": "call_1", "type": "function",
                                   "function": {"name": "alpha", "arguments": ARGS_BA}}]}
        first = {"id": "x", "object": "chat.completion", "model": MODEL,
                 "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        second = {"id": "y", "object": "chat.completion", "model": MODEL,
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                               "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        kept = message
    else:
        blocks = [{"type": "thinking", "thinking": "hmm", "signature": "sig"},
                  {"type": "tool_use", "id": "call_1", "name": "alpha", "input": {"b": 2, "a": 1}}]
        first = {"id": "x", "type": "message", "role": "assistant", "model": MODEL,
                 "content": blocks, "stop_reason": "tool_use",
                 "usage": {"input_tokens": 1, "output_tokens": 1}}
        second = {"id": "y", "type": "message", "role": "assistant", "model": MODEL,
                  "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                  "usage": {"input_tokens": 1, "output_tokens": 1}}
        kept = {"role": "assistant", "content": blocks}
    log = Log()
    with respx.mock(base_url="http://llm.test/v1", assert_all_called=False) as mock:
        route = mock.post("/chat/completions" if style == "openai" else "/messages").mock(
            side_effect=[httpx.Response(200, json=first), httpx.Response(200, json=second)])

        async def go() -> Any:
            return await make_client(style).run(
                "go", toolkit=await toolkit(real_tool(log, "alpha", "a-out")))

        result = asyncio.run(go())
    next_messages = json.loads(route.calls[1].request.content)["messages"]
    assert next_messages[1] == kept
    assert result.messages[1] == kept

"""Request bodies against the official SDKs' typed request params (openai 3.60:
``openai.types.chat.completion_create_params`` and the message, tool-call and tool param
types; anthropic 2.16: ``anthropic.types.message_create_params`` and the message, block and
tool param types), which are generated from the providers' published request schemas.

- The fake provider's tables of documented parameters and block types
  (toolnexus_conformance/fake_provider/request_rules.py) are the SDKs' own.
- Every key a golden request body sends is a documented parameter of its endpoint, at every
  level the SDK types describe (top level, messages, tool calls, blocks, tools).

One key is sent although no request param type lists it: ``annotations`` on an OpenAI
assistant message. Decision: accepted. OpenAI's function-calling guide replays the model's
message as returned (``messages.append(completion.choices[0].message)``), and the openai
SDK then sends every key of that ``ChatCompletionMessage``, ``annotations`` included (shown
by ``test_the_sdk_itself_replays_annotations``); the API serves that documented pattern, so a
port that keeps the provider's message verbatim (SPEC.md loop.assistant-extra-keys) sends
nothing the API refuses. The fake provider accepts it for the same reason.
"""

from __future__ import annotations

import importlib
import json
import typing
from collections.abc import Iterator
from typing import Any

import pytest

from toolnexus_conformance.fake_provider import FakeProvider, request_rules
from toolnexus_conformance.helpers.paths import fixtures_dir

# Keys a documented client sends although no request param type lists them, with the reason.
ECHOED_RESPONSE_KEYS = {("openai", "assistant"): {"annotations"}}


@pytest.fixture(scope="module")
def types_() -> dict[str, Any]:
    """The SDK types, imported when a test here runs (importing them costs seconds)."""
    why = "the request-type check needs the {} package from the test extra (pip install -e '.[test]')"
    openai = pytest.importorskip("openai", reason=why.format("openai"))
    anthropic = pytest.importorskip("anthropic", reason=why.format("anthropic"))
    chat = importlib.import_module("openai.types.chat")
    create = importlib.import_module("openai.types.chat.completion_create_params")
    shared = importlib.import_module("openai.types.shared_params")
    at = importlib.import_module("anthropic.types")
    messages = importlib.import_module("anthropic.types.message_create_params")
    del openai, anthropic
    return {
        "openai.body": _keys(create.CompletionCreateParamsStreaming) | _keys(create.CompletionCreateParamsNonStreaming),
        "openai.message": {
            "system": _keys(chat.ChatCompletionSystemMessageParam),
            "developer": _keys(chat.ChatCompletionDeveloperMessageParam),
            "user": _keys(chat.ChatCompletionUserMessageParam),
            "assistant": _keys(chat.ChatCompletionAssistantMessageParam),
            "tool": _keys(chat.ChatCompletionToolMessageParam),
            "function": _keys(chat.ChatCompletionFunctionMessageParam),
        },
        "openai.tool_call": _keys(chat.ChatCompletionMessageFunctionToolCallParam),
        "openai.tool_call.function": _keys(importlib.import_module(
            "openai.types.chat.chat_completion_message_function_tool_call_param").Function),
        "openai.tool": _keys(chat.ChatCompletionFunctionToolParam),
        "openai.tool.function": _keys(shared.FunctionDefinition),
        "openai.stream_options": _keys(chat.ChatCompletionStreamOptionsParam),
        "anthropic.body": _keys(messages.MessageCreateParamsStreaming) | _keys(messages.MessageCreateParamsNonStreaming),
        "anthropic.message": {_tag(t, "role"): _keys(t) for t in typing.get_args(at.MessageParam)},
        "anthropic.block": {_tag(t, "type"): _keys(t) for t in typing.get_args(at.ContentBlockParam)},
        "anthropic.tool": _keys(at.ToolParam),
    }


def _keys(typed_dict: Any) -> set[str]:
    return set(typing.get_type_hints(typed_dict))


def _tag(typed_dict: Any, field: str) -> str:
    return str(typing.get_args(typing.get_args(typing.get_type_hints(typed_dict, include_extras=True)[field])[0])[0])


def test_the_fake_providers_tables_are_the_sdks(types_: dict[str, Any]) -> None:
    assert set(request_rules.OPENAI_PARAMETERS) == types_["openai.body"]
    assert set(request_rules.ANTHROPIC_PARAMETERS) == types_["anthropic.body"]
    assert list(request_rules.ANTHROPIC_BLOCK_TYPES) == list(types_["anthropic.block"])


def _golden_requests() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(where, style, body) of every request body of every golden."""
    for path in sorted((fixtures_dir() / "golden").glob("*/*.json")):
        style = path.stem.split("-", 1)[0]
        data = json.loads(path.read_text(encoding="utf-8"))
        for p, phase in enumerate(data["observables"].get("phases", [])):
            for r, body in enumerate(phase.get("requests", [])):
                yield f"{path.parent.name}/{path.name} phase {p} request {r}", style, body


def _undocumented_openai(body: dict[str, Any], t: dict[str, Any]) -> Iterator[str]:
    yield from (key for key in body if key not in t["openai.body"])
    yield from (f"stream_options.{k}" for k in body.get("stream_options") or {} if k not in t["openai.stream_options"])
    for i, msg in enumerate(body.get("messages", [])):
        allowed = t["openai.message"].get(msg.get("role"), set()) | ECHOED_RESPONSE_KEYS.get(("openai", msg.get("role")), set())
        yield from (f"messages[{i}].{k}" for k in msg if k not in allowed)
        for j, call in enumerate(msg.get("tool_calls") or []):
            yield from (f"messages[{i}].tool_calls[{j}].{k}" for k in call if k not in t["openai.tool_call"])
            function = call.get("function") or {}
            yield from (f"messages[{i}].tool_calls[{j}].function.{k}" for k in function if k not in t["openai.tool_call.function"])
    for i, tool in enumerate(body.get("tools", [])):
        yield from (f"tools[{i}].{k}" for k in tool if k not in t["openai.tool"])
        yield from (f"tools[{i}].function.{k}" for k in tool.get("function") or {} if k not in t["openai.tool.function"])


def _undocumented_anthropic(body: dict[str, Any], t: dict[str, Any]) -> Iterator[str]:
    yield from (key for key in body if key not in t["anthropic.body"])
    for i, msg in enumerate(body.get("messages", [])):
        yield from (f"messages.{i}.{k}" for k in msg if k not in t["anthropic.message"].get(msg.get("role"), set()))
        yield from _undocumented_blocks(msg.get("content"), f"messages.{i}.content", t)
    yield from _undocumented_blocks(body.get("system"), "system", t)
    for i, tool in enumerate(body.get("tools", [])):
        yield from (f"tools.{i}.{k}" for k in tool if k not in t["anthropic.tool"])


def _undocumented_blocks(content: Any, where: str, t: dict[str, Any]) -> Iterator[str]:
    for j, block in enumerate(content if isinstance(content, list) else []):
        allowed = t["anthropic.block"].get(block.get("type"))
        if allowed is None:
            yield f"{where}.{j}.type={block.get('type')!r}"
            continue
        yield from (f"{where}.{j}.{k}" for k in block if k not in allowed)
        if block.get("type") == "tool_result":
            yield from _undocumented_blocks(block.get("content"), f"{where}.{j}.content", t)


def test_every_golden_request_key_is_documented(types_: dict[str, Any]) -> None:
    problems: list[str] = []
    seen = 0
    for where, style, body in _golden_requests():
        seen += 1
        check = _undocumented_openai if style == "openai" else _undocumented_anthropic
        problems.extend(f"{where}: {key}" for key in check(body, types_))
    assert seen > 500, "the goldens hold the request bodies of every variant"
    assert problems == [], "keys no SDK request type documents:\n" + "\n".join(problems[:40])


def test_the_check_finds_an_undocumented_key(types_: dict[str, Any]) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi", "name": "u", "mood": "ok"}], "max_turns": 2}
    assert list(_undocumented_openai(body, types_)) == ["max_turns", "messages[0].mood"]
    body = {"model": "m", "max_tokens": 1, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "x", "lang": "en"}, {"type": "note"}]}]}
    assert list(_undocumented_anthropic(body, types_)) == ["messages.0.content.0.lang", "messages.0.content.1.type='note'"]


def test_the_sdk_itself_replays_annotations(types_: dict[str, Any], provider: FakeProvider) -> None:
    """The reason ``annotations`` is accepted: the documented replay of a response message
    sends it."""
    import openai  # imported by the fixture already

    assert "annotations" not in types_["openai.message"]["assistant"]
    first = {"toolCalls": [{"id": "c1", "name": "f", "arguments": "{}"}],
             "extra": {"extraMessageKeys": {"refusal": None, "annotations": []}}}
    session = provider.session([first, {"text": "ok"}], "openai")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    with openai.OpenAI(base_url=session.base_url, api_key="sk-types", max_retries=0) as client:
        messages: list[Any] = [{"role": "user", "content": "hi"}]
        completion = client.chat.completions.create(model="m", messages=messages, tools=tools)
        messages += [completion.choices[0].message, {"role": "tool", "tool_call_id": "c1", "content": "r"}]
        client.chat.completions.create(model="m", messages=messages, tools=tools)
    assert session.requests[1].parsed["messages"][1]["annotations"] == []
    assert session.violations == []

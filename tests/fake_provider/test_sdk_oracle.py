"""The official SDKs as the fake provider's oracle: the ``openai`` and ``anthropic`` packages
from PyPI (the test extra), with their default settings, pointed at fake-provider sessions.

For every response shape and wire variation a scenario can script (toolnexus_conformance/fake_provider/
wire.py ``SHAPES``), each SDK reads the scripted turn through its JSON call, its raw stream
and its own stream helper (openai: ``ChatCompletionStreamState`` and
``client.chat.completions.stream``; anthropic: ``client.messages.stream(...)
.get_final_message()``), and what it parsed must be what the script said: text, call ids,
names, raw argument text, usage. A shape the SDK cannot read must be marked ``gateway``.
"""

from __future__ import annotations

import importlib
import json
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from toolnexus_conformance.fake_provider import FakeProvider, Session
from toolnexus_conformance.fake_provider.wire import GATEWAY, PROVIDER, SHAPES, turn_shapes


@pytest.fixture(scope="module")
def sdk() -> types.SimpleNamespace:
    """The two SDKs, imported when a test here runs rather than when pytest collects this
    module (importing them costs seconds, and every xdist worker collects every module)."""
    why = "the SDK oracle needs the {} package from the test extra (pip install -e '.[test]')"
    found = types.SimpleNamespace(
        openai=pytest.importorskip("openai", reason=why.format("openai")),
        anthropic=pytest.importorskip("anthropic", reason=why.format("anthropic")),
    )
    found.StreamState = importlib.import_module("openai.lib.streaming.chat").ChatCompletionStreamState
    return found


OPENAI_KEY = "sk-oracle"
ANTHROPIC_KEY = "ak-oracle"
MODEL = "oracle-model"
ASK = [{"role": "user", "content": "hi"}]
# the same request three ways (JSON, raw stream, stream helper) plus the helper's own stream
REQUESTS_PER_CASE = 4

CALLS = [
    {"id": "call_o1", "name": "get_time", "arguments": '{ "zone":  "Europe/Oslo", "a": [1, 2] }'},
    {"id": "call_o2", "name": "search", "arguments": '{"q":"Zürich ☕"}'},
]
TEXT = "Grüße aus Zürich 🚀, it is 09:30."
THINKING = {"type": "thinking", "thinking": "The time tool answers this.", "signature": "sig-o1"}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}


@dataclass(frozen=True)
class Case:
    name: str
    turn: dict[str, Any]


def _turn(**fields: Any) -> dict[str, Any]:
    return {"usage": {"input": 11, "output": 7}, **fields}


OPENAI_CASES = [
    Case("text", _turn(text=TEXT)),
    Case("text and calls", _turn(text=TEXT, toolCalls=CALLS)),
    Case("calls only", _turn(toolCalls=CALLS)),
    Case("no text, no calls", _turn()),
    Case("content null", _turn(toolCalls=CALLS[:1], wire={"content": "null"})),
    Case("content empty", _turn(toolCalls=CALLS[:1], wire={"content": "empty"})),
    Case("split every 7", _turn(text=TEXT, toolCalls=CALLS, wire={"split": {"every": 7, "pauseMs": 0}})),
    Case("split inside UTF-8", _turn(text=TEXT, toolCalls=CALLS, wire={"split": {"utf8": True, "at": [5, 90], "pauseMs": 0}})),
    Case("indexes without gaps", _turn(toolCalls=CALLS, wire={"toolCallIndexes": [0, 1]})),
    Case("message keys", _turn(toolCalls=CALLS[:1], extra={"extraMessageKeys": {"refusal": None, "annotations": []}})),
    Case("response keys", _turn(text=TEXT, extra={"extraResponseKeys": {"system_fingerprint": "fp_o", "service_tier": "default"}})),
    # a forced tool choice ends with "stop" (the SDK's accumulator refuses "length" by design)
    Case("stop reason override", _turn(toolCalls=CALLS[:1], stopReason="stop")),
]

ANTHROPIC_CASES = [
    Case("text", _turn(text=TEXT)),
    Case("text and calls", _turn(text=TEXT, toolCalls=CALLS)),
    Case("calls only", _turn(toolCalls=CALLS)),
    Case("no text, no calls", _turn()),
    Case("thinking", _turn(toolCalls=CALLS[:1], extra={"extraBlocks": [THINKING]})),
    Case("redacted thinking", _turn(text=TEXT, extra={"extraBlocks": [REDACTED, THINKING]})),
    Case("split every 5", _turn(text=TEXT, toolCalls=CALLS, extra={"extraBlocks": [THINKING]}, wire={"split": {"every": 5, "pauseMs": 0}})),
    Case("split inside UTF-8", _turn(text=TEXT, toolCalls=CALLS, wire={"split": {"utf8": True, "pauseMs": 0}})),
    Case("response keys", _turn(text=TEXT, extra={"extraResponseKeys": {"service_tier": "standard"}})),
    Case("unknown event", _turn(toolCalls=CALLS[:1], extra={"extraEvents": [{"type": "message_metadata", "note": "new"}]})),
    Case("stop reason override", _turn(text=TEXT, stopReason="max_tokens")),
]


def _openai_client(sdk: Any, session: Session) -> Any:
    return sdk.openai.OpenAI(base_url=session.base_url, api_key=OPENAI_KEY, max_retries=0)


def _anthropic_client(sdk: Any, session: Session) -> Any:
    return sdk.anthropic.Anthropic(base_url=session.root_url, api_key=ANTHROPIC_KEY, max_retries=0)


def _expected_finish(turn: dict[str, Any], style: str) -> str:
    if "stopReason" in turn:
        return str(turn["stopReason"])
    if style == "openai":
        return "tool_calls" if turn.get("toolCalls") else "stop"
    return "tool_use" if turn.get("toolCalls") else "end_turn"


def _openai_message_matches(message: Any, turn: dict[str, Any]) -> None:
    assert (message.content or "") == turn.get("text", "")
    calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]
    assert calls == [(c["id"], c["name"], c["arguments"]) for c in turn.get("toolCalls", [])], "raw argument text"
    for key, value in turn.get("extra", {}).get("extraMessageKeys", {}).items():
        assert getattr(message, key) == value


def _openai_usage_matches(usage: Any, turn: dict[str, Any]) -> None:
    scripted = turn["usage"]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (
        scripted["input"], scripted["output"], scripted["input"] + scripted["output"]
    )


@pytest.mark.parametrize("case", OPENAI_CASES, ids=[c.name for c in OPENAI_CASES])
def test_openai_sdk_reads_what_the_script_says(sdk: Any, provider: FakeProvider, case: Case) -> None:
    session = provider.session([case.turn] * REQUESTS_PER_CASE, "openai")
    with _openai_client(sdk, session) as client:
        completion = client.chat.completions.create(model=MODEL, messages=ASK)
        _openai_message_matches(completion.choices[0].message, case.turn)
        assert completion.choices[0].finish_reason == _expected_finish(case.turn, "openai")
        _openai_usage_matches(completion.usage, case.turn)
        for key, value in case.turn.get("extra", {}).get("extraResponseKeys", {}).items():
            assert getattr(completion, key) == value
        assert completion._request_id == f"req_fake_{session.token}_0"

        # the raw stream, chunk by chunk, into the SDK's own accumulator
        state = sdk.StreamState()
        text = ""
        with client.chat.completions.create(
            model=MODEL, messages=ASK, stream=True, stream_options={"include_usage": True}
        ) as stream:
            for chunk in stream:
                assert chunk.object == "chat.completion.chunk" and chunk.model == MODEL
                text += "".join(choice.delta.content or "" for choice in chunk.choices)
                state.handle_chunk(chunk)
        assert text == case.turn.get("text", "")
        accumulated = state.get_final_completion()
        _openai_message_matches(accumulated.choices[0].message, case.turn)
        assert accumulated.choices[0].finish_reason == _expected_finish(case.turn, "openai")
        _openai_usage_matches(accumulated.usage, case.turn)

        # the SDK's stream helper
        with client.chat.completions.stream(
            model=MODEL, messages=ASK, stream_options={"include_usage": True}
        ) as helper:
            final = helper.get_final_completion()
        _openai_message_matches(final.choices[0].message, case.turn)
        _openai_usage_matches(final.usage, case.turn)
    assert session.violations == [] and provider.internal_errors == []


def _anthropic_message_matches(message: Any, turn: dict[str, Any]) -> None:
    blocks = [block.to_dict() for block in message.content]
    extra = list(turn.get("extra", {}).get("extraBlocks", []))
    assert blocks[: len(extra)] == extra, "extra blocks as scripted, thinking text and signature included"
    rest = blocks[len(extra):]
    texts = [b["text"] for b in rest if b["type"] == "text"]
    assert "".join(texts) == turn.get("text", "")
    uses = [(b["id"], b["name"], b["input"]) for b in rest if b["type"] == "tool_use"]
    assert uses == [(c["id"], c["name"], json.loads(c["arguments"])) for c in turn.get("toolCalls", [])]
    for block in rest:
        if block["type"] == "tool_use":
            assert list(block["input"]) == list(json.loads(_call(turn, block["id"])["arguments"])), "key order"
    assert message.stop_reason == _expected_finish(turn, "anthropic")
    assert (message.usage.input_tokens, message.usage.output_tokens) == (turn["usage"]["input"], turn["usage"]["output"])


def _call(turn: dict[str, Any], call_id: str) -> dict[str, Any]:
    return next(c for c in turn["toolCalls"] if c["id"] == call_id)


@pytest.mark.parametrize("case", ANTHROPIC_CASES, ids=[c.name for c in ANTHROPIC_CASES])
def test_anthropic_sdk_reads_what_the_script_says(sdk: Any, provider: FakeProvider, case: Case) -> None:
    session = provider.session([case.turn] * REQUESTS_PER_CASE, "anthropic")
    with _anthropic_client(sdk, session) as client:
        message = client.messages.create(model=MODEL, max_tokens=64, messages=ASK)
        _anthropic_message_matches(message, case.turn)
        for key, value in case.turn.get("extra", {}).get("extraResponseKeys", {}).items():
            assert getattr(message, key) == value
        assert message._request_id == f"req_fake_{session.token}_0"

        # the raw stream: the argument text arrives as scripted, byte for byte
        partial: dict[int, str] = {}
        text = ""
        with client.messages.create(model=MODEL, max_tokens=64, messages=ASK, stream=True) as stream:
            for event in stream:
                if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                    partial[event.index] = partial.get(event.index, "") + event.delta.partial_json
                elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                    text += event.delta.text
        assert text == case.turn.get("text", "")
        assert list(partial.values()) == [c["arguments"] for c in case.turn.get("toolCalls", [])]

        # the SDK's stream helper
        with client.messages.stream(model=MODEL, max_tokens=64, messages=ASK) as helper:
            _anthropic_message_matches(helper.get_final_message(), case.turn)
    assert session.violations == [] and provider.internal_errors == []
    # anthropic 2.x authenticates with a Bearer key, and the fake provider serves it
    assert session.requests[0].headers.get("authorization", "").startswith("Bearer")


def test_every_provider_shape_has_an_oracle_case() -> None:
    """A shape marked provider is one the official SDK reads: each needs a case above."""
    covered = {
        (style, name)
        for style, cases in (("openai", OPENAI_CASES), ("anthropic", ANTHROPIC_CASES))
        for case in cases
        for name in turn_shapes(case.turn)
    }
    provider_shapes = {(style, s.name) for s in SHAPES.values() for style, origin in s.origin.items() if origin == PROVIDER}
    assert provider_shapes - covered == set()
    gateway_in_cases = {(style, name) for style, name in covered if SHAPES[name].origin.get(style) == GATEWAY}
    assert gateway_in_cases == set(), "a gateway shape belongs in the tests below, not among the provider cases"


# --- gateway shapes: what the official SDKs cannot read --------------------------------------------


def _openai_stream_state(sdk: Any, session: Session) -> Any:
    with _openai_client(sdk, session) as client:
        state = sdk.StreamState()
        with client.chat.completions.create(
            model=MODEL, messages=ASK, stream=True, stream_options={"include_usage": True}
        ) as stream:
            for chunk in stream:
                state.handle_chunk(chunk)
        return state.get_final_completion()


def _anthropic_final(sdk: Any, session: Session) -> Any:
    with _anthropic_client(sdk, session) as client, client.messages.stream(model=MODEL, max_tokens=64, messages=ASK) as helper:
        return helper.get_final_message()


BREAKING: list[tuple[str, str, dict[str, Any], Callable[[Any, Session], Any]]] = [
    ("wire.toolCallIndexes=gaps", "openai", _turn(toolCalls=CALLS, wire={"toolCallIndexes": [1, 4]}), _openai_stream_state),
    ("wire.omitToolCallIndex", "openai", _turn(toolCalls=CALLS[:1], wire={"omitToolCallIndex": True}), _openai_stream_state),
    ("wire.toolCallOrder=reversed", "openai", _turn(toolCalls=CALLS, wire={"toolCallOrder": "reversed"}), _openai_stream_state),
    ("wire.usage=absent", "anthropic", _turn(text=TEXT, wire={"usage": "absent"}), _anthropic_final),
]


@pytest.mark.parametrize(("shape", "style", "turn", "read"), BREAKING, ids=[b[0] for b in BREAKING])
def test_shapes_the_sdk_cannot_read_are_marked_gateway(
    sdk: Any, provider: FakeProvider, shape: str, style: str, turn: dict[str, Any], read: Callable[[Any, Session], Any]
) -> None:
    assert shape in turn_shapes(turn)
    session = provider.session([turn], style)
    with pytest.raises((IndexError, TypeError, AttributeError, KeyError)):
        read(sdk, session)
    assert SHAPES[shape].origin[style] == GATEWAY, f"{shape}: the official SDK cannot read it, so it is a gateway shape"


READABLE_GATEWAY: list[tuple[str, str, dict[str, Any]]] = [
    # the SDKs read these (fields are Optional there), but the official APIs do not send them
    ("wire.usage=absent", "openai", _turn(text=TEXT, wire={"usage": "absent"})),
    ("wire.usage=no-total", "openai", _turn(text=TEXT, wire={"usage": "no-total"})),
    ("wire.usage=zero-total", "openai", _turn(text=TEXT, wire={"usage": "zero-total"})),
    ("wire.content=absent", "openai", _turn(toolCalls=CALLS[:1], wire={"content": "absent"})),
    ("wire.toolCallOrder=interleaved", "openai", _turn(toolCalls=CALLS, wire={"toolCallOrder": "interleaved"})),
    ("extra.extraEvents", "openai", _turn(text=TEXT, extra={"extraEvents": [{"choices": [], "prompt_filter_results": []}]})),
]


@pytest.mark.parametrize(("shape", "style", "turn"), READABLE_GATEWAY, ids=[r[0] for r in READABLE_GATEWAY])
def test_readable_gateway_shapes_are_marked_and_read_as_scripted(
    sdk: Any, provider: FakeProvider, shape: str, style: str, turn: dict[str, Any]
) -> None:
    assert shape in turn_shapes(turn) and SHAPES[shape].origin[style] == GATEWAY
    session = provider.session([turn], style)
    final = _openai_stream_state(sdk, session)
    message = final.choices[0].message
    assert (message.content or "") == turn.get("text", "")
    assert [(c.id, c.function.arguments) for c in message.tool_calls or []] == [
        (c["id"], c["arguments"]) for c in turn.get("toolCalls", [])
    ]


def test_every_gateway_shape_is_tried_on_the_sdk() -> None:
    tried = {(b[1], b[0]) for b in BREAKING} | {(r[1], r[0]) for r in READABLE_GATEWAY}
    gateway = {(style, s.name) for s in SHAPES.values() for style, origin in s.origin.items() if origin == GATEWAY}
    assert gateway - tried == set()

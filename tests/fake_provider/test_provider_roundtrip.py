"""Scripted turns come back intact in both styles, as JSON and as SSE."""

from __future__ import annotations

import email.utils
import json
import time

import httpx
import pytest
from fake_provider_client import (
    assemble_anthropic,
    assemble_openai,
    minimal_body,
    post,
)

from toolnexus_conformance.fake_provider import FakeProvider

RAW_ARGS = '{ "b": 2,  "a": {"z": [1, 2], "y": "ü"} }'
TOOL_TURN = {
    "text": "let me look",
    "toolCalls": [
        {"id": "call_1", "name": "lookup", "arguments": RAW_ARGS},
        {"id": "call_2", "name": "fetch", "arguments": '{"url":  "x"}'},
    ],
    "usage": {"input": 3, "output": 5},
}
SILENT_TOOL_TURN = {
    "toolCalls": [{"id": "call_3", "name": "lookup", "arguments": '{"q": 1}'}],
    "usage": {"input": 7, "output": 11},
}
FINAL_TURN = {"text": "all done", "usage": {"input": 13, "output": 17}}


def test_openai_json(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([TOOL_TURN, SILENT_TOOL_TURN, FINAL_TURN], "openai")
    first = post(client, session, minimal_body("openai", model="gpt-x"))
    assert first.status_code == 200
    assert first.headers["content-type"] == "application/json"
    body = first.json()
    assert body["model"] == "gpt-x"
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["role"] == "assistant" and message["content"] == "let me look"
    assert message["tool_calls"][0] == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "lookup", "arguments": RAW_ARGS},
    }
    assert body["usage"] == {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}

    second = post(client, session, minimal_body("openai")).json()
    assert second["choices"][0]["message"]["content"] is None

    third = post(client, session, minimal_body("openai")).json()
    assert third["choices"][0]["finish_reason"] == "stop"
    assert third["choices"][0]["message"] == {"role": "assistant", "content": "all done"}
    assert session.turns_served == 3 and session.exhausted
    assert session.violations == []


def test_openai_sse(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([TOOL_TURN, FINAL_TURN], "openai")
    body = minimal_body("openai", stream=True, stream_options={"include_usage": True})
    response = post(client, session, body)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert "content-length" not in response.headers
    # as the providers serve a stream: chunked, on a connection kept alive
    assert response.headers["transfer-encoding"] == "chunked"
    assert "connection" not in response.headers
    assembled = assemble_openai(response.text)
    assert assembled["text"] == "let me look"
    assert assembled["tool_calls"] == [
        {"id": "call_1", "name": "lookup", "arguments": RAW_ARGS},
        {"id": "call_2", "name": "fetch", "arguments": '{"url":  "x"}'},
    ]
    assert assembled["finish_reason"] == "tool_calls"
    assert assembled["usage"] == {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    assert assembled["done"]
    # arguments really arrive in pieces, so a client that overwrites instead of appends fails
    argument_pieces = [line for line in response.text.split("\n") if '"arguments":"{' in line]
    assert all(RAW_ARGS not in piece for piece in argument_pieces)

    final = assemble_openai(post(client, session, body).text)
    assert final["text"] == "all done" and final["tool_calls"] == []
    assert final["finish_reason"] == "stop"


def test_openai_sse_usage_only_when_asked(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([FINAL_TURN], "openai")
    response = post(client, session, minimal_body("openai", stream=True))
    assert assemble_openai(response.text)["usage"] is None


def test_anthropic_json(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([TOOL_TURN, SILENT_TOOL_TURN, FINAL_TURN], "anthropic")
    body = post(client, session, minimal_body("anthropic", model="claude-x")).json()
    assert body["type"] == "message" and body["role"] == "assistant"
    assert body["model"] == "claude-x"
    assert body["stop_reason"] == "tool_use"
    assert body["usage"] == {"input_tokens": 3, "output_tokens": 5}
    text, use, _ = body["content"]
    assert text == {"type": "text", "text": "let me look"}
    assert use == {"type": "tool_use", "id": "call_1", "name": "lookup", "input": json.loads(RAW_ARGS)}
    assert list(use["input"]) == ["b", "a"], "key order of the scripted arguments is kept"

    second = post(client, session, _answer_body(body, "call_1", "call_2")).json()
    assert [b["type"] for b in second["content"]] == ["tool_use"]

    third = post(client, session, _answer_body(second, "call_3")).json()
    assert third["stop_reason"] == "end_turn"
    assert third["content"] == [{"type": "text", "text": "all done"}]
    assert session.violations == []


def test_anthropic_sse(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([TOOL_TURN], "anthropic")
    response = post(client, session, minimal_body("anthropic", stream=True))
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert "content-length" not in response.headers
    assembled = assemble_anthropic(response.text)
    assert assembled["stop_reason"] == "tool_use"
    # summed the way ports sum: message_start input + message_delta output
    assert assembled["usage"] == {"input_tokens": 3, "output_tokens": 5}
    assert assembled["content"] == [
        {"type": "text", "text": "let me look"},
        {"type": "tool_use", "id": "call_1", "name": "lookup", "input": json.loads(RAW_ARGS)},
        {"type": "tool_use", "id": "call_2", "name": "fetch", "input": {"url": "x"}},
    ]
    names = assembled["event_names"]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 3
    partials = [line for line in response.text.split("\n") if "input_json_delta" in line]
    assert len(partials) == 4, "two partial_json pieces per tool call"


@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_stop_reason_override(provider: FakeProvider, client: httpx.Client, style: str) -> None:
    turn = {"text": "cut", "stopReason": "length" if style == "openai" else "max_tokens"}
    session = provider.session([turn], style)
    body = post(client, session, minimal_body(style)).json()
    if style == "openai":
        assert body["choices"][0]["finish_reason"] == "length"
    else:
        assert body["stop_reason"] == "max_tokens"


def test_anthropic_base_without_v1(provider: FakeProvider, client: httpx.Client) -> None:
    """A client given the root URL appends /v1/messages itself and reaches the same place."""
    session = provider.session([FINAL_TURN], "anthropic")
    response = client.post(
        session.root_url + "/v1/messages",
        json=minimal_body("anthropic"),
        headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
    )
    assert response.status_code == 200


def test_keep_alive_reuses_one_connection(provider: FakeProvider) -> None:
    session = provider.session([FINAL_TURN] * 5, "openai")
    ports: set[int] = set()
    with httpx.Client() as http:
        for _ in range(5):
            response = post(http, session, minimal_body("openai"))
            assert response.status_code == 200
            stream = response.extensions["network_stream"]
            ports.add(stream.get_extra_info("client_addr")[1])
    assert len(ports) == 1


def _answer_body(previous: dict, *ids: str) -> dict:
    """A follow-up Anthropic request that answers the given tool_use ids correctly."""
    return minimal_body(
        "anthropic",
        messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": previous["content"]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": i, "content": "ok", "is_error": False}
                    for i in ids
                ],
            },
        ],
    )


def test_every_reply_is_dated_now_in_http_date_form(provider: FakeProvider, client: httpx.Client) -> None:
    # The Date header is formatted once a second and reused: it must still move with the clock.
    session = provider.session([FINAL_TURN, FINAL_TURN], "openai")
    dates = []
    for attempt in range(2):
        if attempt:
            time.sleep(1.01 - time.time() % 1)  # into the next second
        before = email.utils.formatdate(time.time(), usegmt=True)
        dates.append(post(client, session, minimal_body("openai")).headers["date"])
        after = email.utils.formatdate(time.time(), usegmt=True)
        assert dates[-1] in {before, after}, dates[-1]
    assert dates[0] != dates[1], "a cached Date header did not move on with the clock"

"""The fake provider refuses what the real APIs refuse (toolnexus_conformance/fake_provider/request_rules.py),
in the provider's own error envelope and status, and accepts what they accept: both of
Anthropic's key headers, and the parameters the SDKs' typed params document."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fake_provider_client import ANTHROPIC_KEY, minimal_body, post

from toolnexus_conformance.fake_provider import FakeProvider, request_rules
from toolnexus_conformance.fake_provider import pairing as rules

USER = {"role": "user", "content": "hi"}
OPENAI_TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
ANTHROPIC_TOOL = {"name": "f", "input_schema": {"type": "object"}}

OPENAI_REFUSALS: list[tuple[str, dict[str, Any], str, str | None]] = [
    # (case, body changes, rule code, OpenAI "param")
    ("empty messages", {"messages": []}, request_rules.EMPTY_MESSAGES, "messages"),
    ("empty tools", {"tools": []}, request_rules.EMPTY_TOOLS, "tools"),
    ("stream_options without stream", {"stream_options": {"include_usage": True}},
     request_rules.STREAM_OPTIONS_WITHOUT_STREAM, "stream_options"),
    ("stream_options with stream false", {"stream": False, "stream_options": {"include_usage": True}},
     request_rules.STREAM_OPTIONS_WITHOUT_STREAM, "stream_options"),
    ("unknown parameter", {"max_turns": 3}, request_rules.UNKNOWN_PARAMETER, None),
    ("user message without content", {"messages": [{"role": "user"}]}, request_rules.MISSING_CONTENT,
     "messages[0].content"),
    ("temperature above 2", {"temperature": 5}, request_rules.OUT_OF_RANGE, "temperature"),
    ("temperature below 0", {"temperature": -0.5}, request_rules.OUT_OF_RANGE, "temperature"),
    ("tool without function.name", {"tools": [{"type": "function", "function": {"parameters": {}}}]},
     request_rules.TOOL_MISSING_FIELD, "tools[0].function.name"),
    ("tool without function", {"tools": [{"type": "function"}]}, request_rules.TOOL_MISSING_FIELD, "tools[0].function"),
    ("tool_choice without tools", {"tool_choice": "auto"}, request_rules.TOOL_CHOICE_WITHOUT_TOOLS, "tool_choice"),
    ("tool message without tool_call_id",
     {"messages": [USER, {"role": "assistant", "content": "x"}, {"role": "tool", "content": "r"}]},
     request_rules.MISSING_TOOL_CALL_ID, "messages[2].tool_call_id"),
]

ANTHROPIC_REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    ("negative max_tokens", {"max_tokens": -1}, request_rules.OUT_OF_RANGE),
    ("empty messages", {"messages": []}, request_rules.EMPTY_MESSAGES),
    ("tool without input_schema", {"tools": [{"name": "f"}]}, request_rules.TOOL_MISSING_FIELD),
    ("custom tool without name", {"tools": [{"type": "custom", "input_schema": {}}]}, request_rules.TOOL_MISSING_FIELD),
    ("unknown parameter", {"tool_mode": "auto"}, request_rules.UNKNOWN_PARAMETER),
    ("temperature (anthropic 2.16 documents none)", {"temperature": 0.5}, request_rules.UNKNOWN_PARAMETER),
    ("empty string content", {"messages": [{"role": "user", "content": ""}]}, request_rules.EMPTY_CONTENT),
    ("empty block list", {"messages": [{"role": "user", "content": []}]}, request_rules.EMPTY_CONTENT),
    ("content missing", {"messages": [{"role": "user"}]}, request_rules.MISSING_CONTENT),
    ("unknown block type", {"messages": [{"role": "user", "content": [{"type": "note", "text": "x"}]}]},
     request_rules.UNKNOWN_BLOCK_TYPE),
    ("tool_choice without tools", {"tool_choice": {"type": "auto"}}, request_rules.TOOL_CHOICE_WITHOUT_TOOLS),
    ("bad role", {"messages": [{"role": "tool", "content": "x"}]}, rules.BAD_MESSAGE),
]


@pytest.mark.parametrize(("case", "changes", "code", "param"), OPENAI_REFUSALS, ids=[c[0] for c in OPENAI_REFUSALS])
def test_openai_refuses_what_the_api_refuses(
    provider: FakeProvider, client: httpx.Client, case: str, changes: dict[str, Any], code: str, param: str | None
) -> None:
    session = provider.session([{"text": "ok"}], "openai")
    response = post(client, session, minimal_body("openai", **changes))
    assert response.status_code == 400, f"{case}: {response.text}"
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert [v.code for v in session.violations] == [code]
    assert session.turns_served == 0, "a refused request serves no turn"


@pytest.mark.parametrize(("case", "changes", "code"), ANTHROPIC_REFUSALS, ids=[c[0] for c in ANTHROPIC_REFUSALS])
def test_anthropic_refuses_what_the_api_refuses(
    provider: FakeProvider, client: httpx.Client, case: str, changes: dict[str, Any], code: str
) -> None:
    session = provider.session([{"text": "ok"}], "anthropic")
    response = post(client, session, minimal_body("anthropic", **changes))
    assert response.status_code == 400, f"{case}: {response.text}"
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert body["request_id"] == response.headers["request-id"]
    assert [v.code for v in session.violations] == [code]


OPENAI_ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    ("tools with tool_choice", {"tools": [OPENAI_TOOL], "tool_choice": "auto"}),
    ("stream_options with stream", {"stream": True, "stream_options": {"include_usage": True}}),
    ("documented sampling keys in range", {"temperature": 2, "top_p": 0, "seed": 7, "max_completion_tokens": 9}),
    ("assistant message with tool_calls and no content",
     {"messages": [USER, {"role": "assistant", "tool_calls": [
         {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
         {"role": "tool", "tool_call_id": "c1", "content": "r"}]}),
    ("developer message", {"messages": [{"role": "developer", "content": "be brief"}, USER]}),
]

ANTHROPIC_ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    # the SDK's docstring: "Set to `0` to populate the prompt cache without generating a response"
    ("max_tokens 0", {"max_tokens": 0}),
    ("tools with tool_choice", {"tools": [ANTHROPIC_TOOL], "tool_choice": {"type": "auto"}}),
    ("server tool without input_schema", {"tools": [{"type": "web_search_20250305", "name": "web_search"}]}),
    ("empty final assistant message (prefill)", {"messages": [USER, {"role": "assistant", "content": ""}]}),
    ("system message (anthropic 2.16's MessageParam)", {"messages": [{"role": "system", "content": "brief"}, USER]}),
    ("thinking block in a replayed turn", {"messages": [USER, {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "text", "text": "hi"}]}, USER]}),
    ("documented keys", {"system": "be brief", "stop_sequences": ["x"], "metadata": {"user_id": "u"}}),
]


ACCEPTED = [("openai", *c) for c in OPENAI_ACCEPTED] + [("anthropic", *c) for c in ANTHROPIC_ACCEPTED]


@pytest.mark.parametrize(("style", "case", "changes"), ACCEPTED, ids=[f"{c[0]}-{c[1]}" for c in ACCEPTED])
def test_each_style_accepts_what_its_api_accepts(
    provider: FakeProvider, client: httpx.Client, style: str, case: str, changes: dict[str, Any]
) -> None:
    session = provider.session([{"text": "ok"}], style)
    response = post(client, session, minimal_body(style, **changes))
    assert response.status_code == 200, f"{case}: {response.text}"
    assert session.violations == []


@pytest.mark.parametrize(
    "headers",
    [
        {"x-api-key": ANTHROPIC_KEY, "anthropic-version": "2023-06-01"},
        # what anthropic 2.x sends by default
        {"Authorization": f"Bearer {ANTHROPIC_KEY}", "anthropic-version": "2023-06-01"},
    ],
    ids=["x-api-key", "bearer"],
)
def test_anthropic_takes_either_key_header(provider: FakeProvider, client: httpx.Client, headers: dict[str, str]) -> None:
    session = provider.session([{"text": "ok"}], "anthropic")
    response = post(client, session, minimal_body("anthropic"), headers=headers)
    assert response.status_code == 200, response.text
    recorded = session.requests[0].headers
    assert ANTHROPIC_KEY not in str(recorded), "the key is redacted in the record whichever header carried it"


def test_anthropic_other_authorization_schemes_are_refused(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([{"text": "ok"}], "anthropic")
    response = post(client, session, minimal_body("anthropic"), headers={"Authorization": "Basic abc", "anthropic-version": "2023-06-01"})
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"


@pytest.mark.parametrize(("style", "header"), [("openai", "x-request-id"), ("anthropic", "request-id")])
def test_every_response_carries_a_request_id(provider: FakeProvider, client: httpx.Client, style: str, header: str) -> None:
    session = provider.session([{"text": "ok"}, {"text": "ok"}], style)
    ids = [
        post(client, session, minimal_body(style)).headers[header],
        post(client, session, minimal_body(style, stream=True)).headers[header],
        post(client, session, minimal_body(style, messages=[])).headers[header],  # refused
    ]
    assert all(ids) and len(set(ids)) == 3, ids

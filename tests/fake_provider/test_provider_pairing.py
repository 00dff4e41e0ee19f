"""The tool-call pairing rules the real APIs enforce: accepted histories pass, broken ones
get the provider's status, envelope and a stable rule code (texts are not asserted on
beyond their identifying fragment)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fake_provider_client import minimal_body, post

from toolnexus_conformance.fake_provider import FakeProvider, pairing


def _assistant_calls(*ids: str, content: str | None = None) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}}
            for i in ids
        ],
    }


def _tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "out"}


USER = {"role": "user", "content": "hi"}
SYSTEM = {"role": "system", "content": "be brief"}

OPENAI_CASES: list[tuple[str, list[dict[str, Any]], str | None]] = [
    ("plain", [SYSTEM, USER], None),
    ("answered", [USER, _assistant_calls("c1", "c2"), _tool("c1"), _tool("c2")], None),
    ("answered out of order", [USER, _assistant_calls("c1", "c2"), _tool("c2"), _tool("c1")], None),
    (
        "answered then user",
        [USER, _assistant_calls("c1"), _tool("c1"), {"role": "assistant", "content": "x"}, USER],
        None,
    ),
    ("unanswered", [USER, _assistant_calls("c1", "c2"), _tool("c1")], pairing.OPENAI_UNANSWERED_CALLS),
    (
        "user between",
        [USER, _assistant_calls("c1", "c2"), _tool("c1"), USER, _tool("c2")],
        pairing.OPENAI_UNANSWERED_CALLS,
    ),
    ("orphan", [USER, _tool("c9")], pairing.OPENAI_ORPHAN_TOOL_MESSAGE),
    ("wrong id", [USER, _assistant_calls("c1"), _tool("c1"), _tool("c7")], pairing.OPENAI_ORPHAN_TOOL_MESSAGE),
    (
        "empty tool_calls",
        [USER, {"role": "assistant", "content": "x", "tool_calls": []}],
        pairing.OPENAI_EMPTY_TOOL_CALLS,
    ),
    ("unknown role", [{"role": "robot", "content": "x"}], pairing.BAD_MESSAGE),
]


@pytest.mark.parametrize(("name", "messages", "code"), OPENAI_CASES, ids=[c[0] for c in OPENAI_CASES])
def test_openai_rules(
    provider: FakeProvider, client: httpx.Client, name: str, messages: list, code: str | None
) -> None:
    session = provider.session([{"text": "ok"}], "openai")
    response = post(client, session, minimal_body("openai", messages=messages))
    if code is None:
        assert response.status_code == 200, response.text
        assert session.violations == []
        return
    assert response.status_code == 400
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"
    assert [v.code for v in session.violations] == [code]
    assert session.violations[0].message == error["message"]
    assert session.violations[0].request_index == 0
    assert session.turns_served == 0, "a rejected request consumes no scripted turn"
    assert len(session.requests) == 1 and session.requests[0].status == 400


def test_openai_unanswered_text_and_param() -> None:
    messages = [SYSTEM, USER, _assistant_calls("c1", "c2"), _tool("c1"), USER]
    (found,) = pairing.openai_pairing(messages)
    assert found.message.endswith("did not have response messages: c2")
    assert found.message.startswith("An assistant message with 'tool_calls' must be followed")
    assert found.param == "messages.[4].role"


def test_openai_orphan_text_and_param() -> None:
    (found,) = pairing.openai_pairing([USER, _tool("c1")])
    assert "preceeding message with 'tool_calls'" in found.message  # OpenAI's own spelling
    assert found.param == "messages.[1].role"


def _uses(*ids: str, text: str | None = "thinking") -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": i, "name": "t", "input": {}} for i in ids]
    return {"role": "assistant", "content": blocks}


def _result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "out", "is_error": False}


def _user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


TEXT = {"type": "text", "text": "and also"}

ANTHROPIC_CASES: list[tuple[str, list[dict[str, Any]], str | None]] = [
    ("plain", [USER], None),
    ("answered", [USER, _uses("t1", "t2"), _user(_result("t1"), _result("t2"))], None),
    ("answered then text", [USER, _uses("t1"), _user(_result("t1"), TEXT)], None),
    ("unanswered", [USER, _uses("t1", "t2"), _user(_result("t1"))], pairing.ANTHROPIC_UNANSWERED_TOOL_USE),
    ("nothing after", [USER, _uses("t1")], pairing.ANTHROPIC_UNANSWERED_TOOL_USE),
    (
        "results split over two messages",
        [USER, _uses("t1", "t2"), _user(_result("t1")), _uses(text="x"), _user(_result("t2"))],
        pairing.ANTHROPIC_UNANSWERED_TOOL_USE,
    ),
    ("text first", [USER, _uses("t1"), _user(TEXT, _result("t1"))], pairing.ANTHROPIC_RESULTS_NOT_FIRST),
    ("orphan", [_user(TEXT, _result("t9"))], pairing.ANTHROPIC_ORPHAN_TOOL_RESULT),
    (
        "wrong id",
        [USER, _uses("t1"), _user(_result("t1"), _result("t8"))],
        pairing.ANTHROPIC_ORPHAN_TOOL_RESULT,
    ),
    # anthropic 2.16 documents user, assistant and system messages (MessageParam); not tool
    ("bad role", [{"role": "tool", "content": "x"}], pairing.BAD_MESSAGE),
]


@pytest.mark.parametrize(
    ("name", "messages", "code"), ANTHROPIC_CASES, ids=[c[0] for c in ANTHROPIC_CASES]
)
def test_anthropic_rules(
    provider: FakeProvider, client: httpx.Client, name: str, messages: list, code: str | None
) -> None:
    session = provider.session([{"text": "ok"}], "anthropic")
    response = post(client, session, minimal_body("anthropic", messages=messages))
    if code is None:
        assert response.status_code == 200, response.text
        assert session.violations == []
        return
    assert response.status_code == 400
    body = response.json()
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert isinstance(body["request_id"], str)
    assert [v.code for v in session.violations][:1] == [code]
    assert session.violations[0].message == body["error"]["message"]
    assert session.turns_served == 0


def test_anthropic_texts_name_the_message() -> None:
    (unanswered,) = pairing.anthropic_pairing([USER, _uses("t1", "t2"), _user(_result("t2"))])
    assert unanswered.message.startswith(
        "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: t1."
    )
    (not_first,) = pairing.anthropic_pairing([USER, _uses("t1"), _user(TEXT, _result("t1"))])
    assert not_first.message.startswith(
        "messages.2: Did not find 1 tool_result block(s) at the beginning of this message."
    )
    (orphan,) = pairing.anthropic_pairing([_user(TEXT, _result("t9"))])
    assert orphan.message.startswith(
        "messages.0.content.1: unexpected `tool_use_id` found in `tool_result` blocks: t9."
    )


@pytest.mark.parametrize(
    ("style", "body", "code"),
    [
        ("openai", [1, 2], pairing.BODY_NOT_OBJECT),
        ("openai", {"messages": []}, pairing.MISSING_MODEL),
        ("openai", {"model": "m"}, pairing.MISSING_MESSAGES),
        ("anthropic", "[]", pairing.BODY_NOT_OBJECT),
        ("anthropic", {"messages": [], "max_tokens": 1}, pairing.MISSING_MODEL),
        ("anthropic", {"model": "m", "max_tokens": 1}, pairing.MISSING_MESSAGES),
        ("anthropic", {"model": "m", "messages": []}, pairing.ANTHROPIC_MISSING_MAX_TOKENS),
    ],
)
def test_shape_checks(
    provider: FakeProvider, client: httpx.Client, style: str, body: object, code: str
) -> None:
    session = provider.session([{"text": "ok"}], style)
    response = post(client, session, body)
    assert response.status_code == 400
    assert [v.code for v in session.violations] == [code]

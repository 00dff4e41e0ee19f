"""A scripted turn's ``extra``: OpenAI message keys and Anthropic blocks on JSON turns and
streams, rejected when malformed, and a replayed thinking block passes the Anthropic
pairing rules (SPEC.md loop.assistant-extra-keys)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fake_provider_client import assemble_anthropic, assemble_openai, minimal_body, post

from toolnexus_conformance.fake_provider import FakeProvider, pairing
from toolnexus_conformance.fake_provider.script import ScriptedTurn, ScriptError

THINKING = {"type": "thinking", "thinking": "the lookup tool answers this", "signature": "sig-1"}
EXTRA_TURN: dict[str, Any] = {
    "toolCalls": [{"id": "call_e1", "name": "lookup", "arguments": '{ "q":  1 }'}],
    "extra": {"extraMessageKeys": {"refusal": None, "annotations": []}, "extraBlocks": [THINKING]},
    "usage": {"input": 2, "output": 3},
}
FINAL_TURN = {"text": "done"}

pytestmark = pytest.mark.rule("loop.assistant-extra-keys")


def test_openai_json_message_carries_the_extra_keys(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([EXTRA_TURN], "openai")
    message = post(client, session, minimal_body("openai")).json()["choices"][0]["message"]
    assert message["refusal"] is None and message["annotations"] == []
    assert message["content"] is None and message["tool_calls"][0]["id"] == "call_e1"
    assert "thinking" not in str(message), "Anthropic blocks never reach an OpenAI message"


def test_anthropic_json_puts_extra_blocks_before_tool_use(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([EXTRA_TURN, FINAL_TURN], "anthropic")
    body = post(client, session, minimal_body("anthropic")).json()
    assert [b["type"] for b in body["content"]] == ["thinking", "tool_use"]
    assert body["content"][0] == THINKING
    assert "refusal" not in body, "OpenAI message keys never reach an Anthropic message"

    replay = minimal_body(
        "anthropic",
        messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": body["content"]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_e1", "content": "ok", "is_error": False}]},
        ],
    )
    assert post(client, session, replay).status_code == 200
    assert session.violations == []


def test_text_turn_keeps_extra_blocks_first(provider: FakeProvider, client: httpx.Client) -> None:
    turn = {"text": "hello", "extra": {"extraBlocks": [THINKING]}}
    session = provider.session([turn], "anthropic")
    content = post(client, session, minimal_body("anthropic")).json()["content"]
    assert content == [THINKING, {"type": "text", "text": "hello"}]


@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_streams_carry_the_extras_of_their_style(provider: FakeProvider, client: httpx.Client, style: str) -> None:
    session = provider.session([EXTRA_TURN], style)
    response = post(client, session, minimal_body(style, stream=True))
    assert response.status_code == 200
    if style == "openai":
        assert '"delta":{"role":"assistant","refusal":null,"annotations":[]}' in response.text
        assert "thinking" not in response.text
        assert assemble_openai(response.text)["tool_calls"][0]["id"] == "call_e1"
    else:
        assert "refusal" not in response.text
        blocks = assemble_anthropic(response.text)["content"]
        assert blocks[0] == THINKING and blocks[1]["type"] == "tool_use"
        # as the Messages API streams thinking: an empty start, then thinking and signature deltas
        assert '"content_block":{"type":"thinking","thinking":"","signature":""}' in response.text
        assert response.text.count('"type":"thinking_delta"') == 2
        assert '"delta":{"type":"signature_delta","signature":"sig-1"}' in response.text


def test_redacted_thinking_streams_whole_in_its_start(provider: FakeProvider, client: httpx.Client) -> None:
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}
    session = provider.session([{"text": "ok", "extra": {"extraBlocks": [redacted]}}], "anthropic")
    response = post(client, session, minimal_body("anthropic", stream=True))
    # the SDK's RawContentBlockDelta has no delta type for it: the start carries the data
    assert f'"content_block":{json.dumps(redacted, separators=(",", ":"))}' in response.text
    assert assemble_anthropic(response.text)["content"][0] == redacted


def test_pairing_accepts_a_thinking_block_in_the_replayed_turn() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [THINKING, {"type": "tool_use", "id": "u1", "name": "t", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u1", "content": "x", "is_error": False}]},
    ]
    assert pairing.anthropic_pairing(messages) == []


def test_extra_round_trips_through_the_neutral_format() -> None:
    turn = ScriptedTurn.from_neutral(EXTRA_TURN)
    assert turn.to_neutral()["extra"] == EXTRA_TURN["extra"]
    assert "extra" not in ScriptedTurn.from_neutral(FINAL_TURN).to_neutral()


@pytest.mark.parametrize(
    ("extra", "complaint"),
    [
        ([], "turn.extra: must be a JSON object"),
        ({"blocks": []}, "turn.extra: unknown key(s) blocks"),
        ({"extraMessageKeys": []}, "turn.extra.extraMessageKeys: must be a JSON object"),
        ({"extraMessageKeys": {"content": "x"}}, "turn.extra.extraMessageKeys: may not set content"),
        ({"extraBlocks": {}}, "turn.extra.extraBlocks: must be a list"),
        ({"extraBlocks": [{"thinking": "x"}]}, "turn.extra.extraBlocks[0]: must be an object with a string type"),
        ({"extraBlocks": [{"type": "tool_use"}]}, "turn.extra.extraBlocks[0]: type tool_use is rendered"),
    ],
)
def test_malformed_extra_is_one_clear_line(extra: Any, complaint: str) -> None:
    with pytest.raises(ScriptError) as caught:
        ScriptedTurn.from_neutral({"text": "x", "extra": extra})
    assert str(caught.value).startswith(complaint)
    assert "\n" not in str(caught.value)

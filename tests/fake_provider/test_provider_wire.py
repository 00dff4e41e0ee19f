"""A scripted turn's ``wire`` and stream ``extra``: the bytes on the wire are what was
scripted — chunk boundaries where the split says (inside UTF-8 sequences and JSON values
included), usage and content shapes, OpenAI tool-call deltas in the scripted order with the
scripted indexes (or none), extra response keys and events — and nothing else changes."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import httpx
import pytest
from fake_provider_client import (
    assemble_anthropic,
    assemble_openai,
    headers_for,
    minimal_body,
    post,
    sse_events,
)

from toolnexus_conformance.fake_provider import FakeProvider, Session
from toolnexus_conformance.fake_provider.script import ScriptedTurn, ScriptError

UNICODE_TEXT = "Café ☕ in 東京 🚀"
CALLS = [
    {"id": "call_a", "name": "alpha", "arguments": '{ "city":  "Zürich" }'},
    {"id": "call_b", "name": "beta", "arguments": '{ "n": 2 }'},
]


def _tool_parts(text: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for _, data in sse_events(text):
        if data != "[DONE]":
            for choice in json.loads(data)["choices"]:
                parts.extend(choice["delta"].get("tool_calls", []))
    return parts


def _stream(client: httpx.Client, session: Session, **extra: Any) -> httpx.Response:
    body = minimal_body(session.style, stream=True, **extra)
    if session.style == "openai":
        body["stream_options"] = {"include_usage": True}
    response = post(client, session, body)
    assert response.status_code == 200, response.text
    return response


# --- chunk boundaries -------------------------------------------------------------------


def _raw_reads(session: Session, body: dict[str, Any]) -> list[bytes]:
    """The body of one streamed response as the socket's successive reads delivered it, with
    the chunked framing taken out (each read keeps the body bytes it carried)."""
    payload = json.dumps(body).encode()
    path = session.base_url.split("127.0.0.1", 1)[1].split("/", 1)[1]
    host, port = session.origin.removeprefix("http://").split(":")
    head = (
        f"POST /{path}/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Authorization: {headers_for('openai')['Authorization']}\r\nContent-Length: {len(payload)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    raw_reads: list[bytes] = []
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(head + payload)
        buffer = b""
        while b"\r\n\r\n" not in buffer:
            buffer += sock.recv(65536)
        response_head, rest = buffer.split(b"\r\n\r\n", 1)
        assert b"transfer-encoding: chunked" in response_head.lower()
        if rest:
            raw_reads.append(rest)
        while chunk := sock.recv(65536):
            raw_reads.append(chunk)
    return _dechunked_reads(raw_reads)


def _dechunked_reads(raw_reads: list[bytes]) -> list[bytes]:
    """Each read's share of the chunked body's data (a read of framing only is dropped)."""
    raw = b"".join(raw_reads)
    owner: list[int] = []  # for each raw byte, the read it arrived in
    for number, read in enumerate(raw_reads):
        owner.extend([number] * len(read))
    shares: list[bytearray] = [bytearray() for _ in raw_reads]
    at = 0
    while True:
        line_end = raw.index(b"\r\n", at)
        size = int(raw[at:line_end], 16)
        start = line_end + 2
        for offset in range(start, start + size):
            shares[owner[offset]].append(raw[offset])
        at = start + size + 2
        if size == 0:
            assert at == len(raw), "bytes after the last chunk"
            return [bytes(share) for share in shares if share]


@pytest.mark.rule("loop.sse-openai")
def test_split_pieces_end_inside_utf8_sequences_and_reads_end_only_there(provider: FakeProvider) -> None:
    turn = {"text": UNICODE_TEXT, "wire": {"split": {"utf8": True, "pauseMs": 25}}}
    plain = provider.session([{"text": UNICODE_TEXT}], "openai")
    split = provider.session([turn], "openai")
    body = minimal_body("openai", stream=True)
    # response ids carry the session token (same length in both), nothing else differs
    whole = b"".join(_raw_reads(plain, body)).replace(plain.token.encode(), split.token.encode())
    reads = _raw_reads(split, body)
    assert b"".join(reads) == whole, "a split changes where reads end, never the bytes"
    pieces = split.replies[0].events
    assert pieces is not None and b"".join(pieces) == whole
    ends = [sum(map(len, pieces[: i + 1])) for i in range(len(pieces) - 1)]
    multibyte = [c for c in UNICODE_TEXT if len(c.encode()) > 1]
    # halves() sends the text in two deltas, each a JSON string holding some of the characters
    assert len(ends) == len(multibyte)
    assert all(0x80 <= whole[end] < 0xC0 for end in ends), "every scripted cut is one byte into a character"
    read_ends = {sum(map(len, reads[: i + 1])) for i in range(len(reads) - 1)}
    assert read_ends <= set(ends), "a read ended where the script put no boundary"
    assert read_ends, "no read ended at a scripted boundary: the pieces were not written separately"


@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_split_every_and_at_cut_exactly_there(provider: FakeProvider, client: httpx.Client, style: str) -> None:
    turn = {"toolCalls": CALLS[:1], "wire": {"split": {"every": 7, "at": [3, 5, 100000], "pauseMs": 0}}}
    plain = provider.session([{"toolCalls": CALLS[:1]}], style)
    split = provider.session([turn], style)
    whole = _stream(client, plain).content.replace(plain.token.encode(), split.token.encode())
    assert _stream(client, split).content == whole
    pieces = split.replies[0].events
    assert pieces is not None
    ends = [sum(map(len, pieces[: i + 1])) for i in range(len(pieces) - 1)]
    assert ends == sorted({3, 5, *range(7, len(whole), 7)})
    assert any(whole[end - 1 : end + 1] not in (b"\n\n",) and b'"' in whole[end - 8 : end + 8] for end in ends)


def test_json_responses_are_never_split(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([{"text": "hi", "wire": {"split": {"every": 2}}}], "openai")
    assert post(client, session, minimal_body("openai")).json()["choices"][0]["message"]["content"] == "hi"
    assert session.replies[0].events is None


# --- usage ----------------------------------------------------------------------------------


@pytest.mark.rule("loop.usage-summed")
@pytest.mark.parametrize(
    ("shape", "want"),
    [
        ("full", {"prompt_tokens": 4, "completion_tokens": 6, "total_tokens": 10}),
        ("absent", None),
        ("no-total", {"prompt_tokens": 4, "completion_tokens": 6}),
        ("zero-total", {"prompt_tokens": 4, "completion_tokens": 6, "total_tokens": 0}),
    ],
)
def test_openai_usage_shapes(provider: FakeProvider, client: httpx.Client, shape: str, want: Any) -> None:
    turn = {"text": "x", "usage": {"input": 4, "output": 6}, "wire": {"usage": shape}}
    session = provider.session([turn, turn], "openai")
    assert post(client, session, minimal_body("openai")).json().get("usage") == want
    streamed = _stream(client, session)
    assert assemble_openai(streamed.text)["usage"] == want
    assert ('"usage"' in streamed.text) is (want is not None)


@pytest.mark.parametrize("shape", ["no-total", "zero-total"])
def test_anthropic_has_no_total_to_vary(provider: FakeProvider, client: httpx.Client, shape: str) -> None:
    turn = {"text": "x", "usage": {"input": 4, "output": 6}, "wire": {"usage": shape}}
    session = provider.session([turn], "anthropic")
    assert post(client, session, minimal_body("anthropic")).json()["usage"] == {"input_tokens": 4, "output_tokens": 6}


def test_anthropic_usage_absent_everywhere(provider: FakeProvider, client: httpx.Client) -> None:
    turn = {"text": "x", "usage": {"input": 4, "output": 6}, "wire": {"usage": "absent"}}
    session = provider.session([turn, turn], "anthropic")
    assert "usage" not in post(client, session, minimal_body("anthropic")).json()
    assert '"usage"' not in _stream(client, session).text


# --- assistant content ----------------------------------------------------------------------


@pytest.mark.rule("loop.assistant-content-null")
@pytest.mark.parametrize(
    ("shape", "json_content", "role_delta"),
    [
        (None, {"content": None}, {"role": "assistant"}),
        ("null", {"content": None}, {"role": "assistant", "content": None}),
        ("empty", {"content": ""}, {"role": "assistant", "content": ""}),
        ("absent", {}, {"role": "assistant"}),
    ],
)
def test_openai_content_of_a_turn_without_text(
    provider: FakeProvider, client: httpx.Client, shape: str | None, json_content: dict[str, Any], role_delta: dict[str, Any]
) -> None:
    turn: dict[str, Any] = {"toolCalls": CALLS[:1]}
    if shape is not None:
        turn["wire"] = {"content": shape}
    session = provider.session([turn, turn], "openai")
    message = post(client, session, minimal_body("openai")).json()["choices"][0]["message"]
    assert {k: v for k, v in message.items() if k == "content"} == json_content
    first = json.loads(sse_events(_stream(client, session).text)[0][1])
    assert first["choices"][0]["delta"] == role_delta


def test_content_shape_never_hides_text(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([{"text": "hello", "wire": {"content": "absent"}}], "openai")
    assert post(client, session, minimal_body("openai")).json()["choices"][0]["message"]["content"] == "hello"


def test_final_turn_content_null(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([{"wire": {"content": "null"}}], "openai")
    assert post(client, session, minimal_body("openai")).json()["choices"][0]["message"]["content"] is None


# --- OpenAI tool-call deltas ----------------------------------------------------------------


@pytest.mark.rule("loop.sse-openai")
@pytest.mark.parametrize(
    ("wire", "want"),
    [
        ({}, [("call_a", 0), (None, 0), (None, 0), ("call_b", 1), (None, 1), (None, 1)]),
        ({"toolCallIndexes": [3, 1]}, [("call_a", 3), (None, 3), (None, 3), ("call_b", 1), (None, 1), (None, 1)]),
        ({"toolCallOrder": "reversed"}, [("call_b", 1), (None, 1), (None, 1), ("call_a", 0), (None, 0), (None, 0)]),
        ({"toolCallOrder": "interleaved", "toolCallIndexes": [0, 2]},
         [("call_a", 0), ("call_b", 2), (None, 0), (None, 2), (None, 0), (None, 2)]),
    ],
)
def test_tool_call_deltas_follow_the_script(
    provider: FakeProvider, client: httpx.Client, wire: dict[str, Any], want: list[tuple[str | None, int | None]]
) -> None:
    session = provider.session([{"toolCalls": CALLS, "wire": wire}, {"toolCalls": CALLS, "wire": wire}], "openai")
    parts = _tool_parts(_stream(client, session).text)
    assert [(p.get("id"), p.get("index")) for p in parts] == want
    assert all(("index" in p) is not wire.get("omitToolCallIndex", False) for p in parts)
    if wire.get("toolCallOrder") != "interleaved":  # each call's pieces follow its opening
        by_id: dict[str, str] = {}
        current = ""
        for part in parts:
            current = part.get("id", current)
            by_id[current] = by_id.get(current, "") + part["function"]["arguments"]
        assert by_id == {c["id"]: c["arguments"] for c in CALLS}
    message = post(client, session, minimal_body("openai")).json()["choices"][0]["message"]
    assert [c["id"] for c in message["tool_calls"]] == ["call_a", "call_b"], "JSON lists calls in script order"


# --- extras on the wire ---------------------------------------------------------------------


@pytest.mark.rule("loop.assistant-extra-keys")
@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_extra_response_keys_and_events(provider: FakeProvider, client: httpx.Client, style: str) -> None:
    unknown = {"type": "content_block_delta", "index": 7, "delta": {"type": "citations_delta"}}
    extra = {"extraResponseKeys": {"system_fingerprint": "fp_1", "service_tier": "default"}, "extraEvents": [unknown]}
    turn = {"text": "hi", "extra": extra}
    session = provider.session([turn, turn], style)
    response = post(client, session, minimal_body(style)).json()
    assert response["system_fingerprint"] == "fp_1" and response["service_tier"] == "default"
    events = sse_events(_stream(client, session).text)
    payloads = [json.loads(data) for _, data in events if data != "[DONE]"]
    assert payloads[1] == unknown, "the extra event comes right after the first"
    if style == "openai":
        assert all(p.get("system_fingerprint") == "fp_1" for p in payloads if p != unknown)
        assert events[1][0] is None
    else:
        assert payloads[0]["message"]["system_fingerprint"] == "fp_1"
        assert events[1][0] == "content_block_delta"


def test_anthropic_stream_assembles_around_extra_blocks(provider: FakeProvider, client: httpx.Client) -> None:
    block = {"type": "redacted_thinking", "data": "abc"}
    session = provider.session([{"toolCalls": CALLS[:1], "extra": {"extraBlocks": [block]}}], "anthropic")
    assembled = assemble_anthropic(_stream(client, session).text)
    assert assembled["content"][0] == block
    assert assembled["content"][1]["input"] == {"city": "Zürich"}


# --- the script format ----------------------------------------------------------------------


def test_omitted_index_carries_one_call(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([{"toolCalls": CALLS[:1], "wire": {"omitToolCallIndex": True}}], "openai")
    parts = _tool_parts(_stream(client, session).text)
    assert [(p.get("id"), "index" in p) for p in parts] == [("call_a", False), (None, False), (None, False)]


def test_wire_round_trips_through_the_neutral_format() -> None:
    wire = {"split": {"every": 3, "at": [1, 9], "utf8": True, "pauseMs": 4}, "usage": "zero-total", "content": "empty",
            "toolCallIndexes": [2, 0], "toolCallOrder": "interleaved"}
    turn = ScriptedTurn.from_neutral({"toolCalls": CALLS, "wire": wire})
    assert turn.to_neutral()["wire"] == wire
    one = {"omitToolCallIndex": True}
    assert ScriptedTurn.from_neutral({"toolCalls": CALLS[:1], "wire": one}).to_neutral()["wire"] == one
    assert "wire" not in ScriptedTurn.from_neutral({"text": "x"}).to_neutral()


@pytest.mark.parametrize(
    ("wire", "complaint"),
    [
        ([], "turn.wire: must be a JSON object"),
        ({"chunks": 2}, "turn.wire: unknown key(s) chunks"),
        ({"usage": "none"}, "turn.wire.usage: must be one of full, absent, no-total, zero-total"),
        ({"content": "nothing"}, "turn.wire.content: must be one of null, empty, absent"),
        ({"toolCallIndexes": [0]}, "turn.wire.toolCallIndexes: needs one distinct index per tool call (2)"),
        ({"toolCallIndexes": [1, 1]}, "turn.wire.toolCallIndexes: needs one distinct index per tool call (2)"),
        ({"toolCallIndexes": [0, -1]}, "turn.wire.toolCallIndexes: must be a list of non-negative integers"),
        ({"toolCallOrder": "random"}, "turn.wire.toolCallOrder: must be one of sequential, reversed, interleaved"),
        ({"split": {}}, "turn.wire.split: says nowhere to split"),
        ({"split": {"every": 0}}, "turn.wire.split.every: must be a positive integer"),
        ({"split": {"at": [True]}}, "turn.wire.split.at: must be a list of non-negative integers"),
        ({"split": {"utf8": True, "pauseMs": 500}}, "turn.wire.split.pauseMs: must be an integer from 0 to 50"),
    ],
)
def test_malformed_wire_is_one_clear_line(wire: Any, complaint: str) -> None:
    data = {"toolCalls": CALLS, "wire": wire}
    with pytest.raises(ScriptError) as caught:
        ScriptedTurn.from_neutral(data)
    assert str(caught.value).startswith(complaint), str(caught.value)
    assert "\n" not in str(caught.value)


def test_extra_response_keys_may_not_shadow_rendered_keys() -> None:
    with pytest.raises(ScriptError, match="extraResponseKeys: may not set choices"):
        ScriptedTurn.from_neutral({"text": "x", "extra": {"extraResponseKeys": {"choices": []}}})


def test_a_split_pauses_between_pieces(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([{"text": "abcdefgh", "wire": {"split": {"every": 40, "pauseMs": 20}}}], "openai")
    started = time.perf_counter()
    _stream(client, session)
    pieces = session.replies[0].events
    assert pieces is not None and len(pieces) > 5
    assert time.perf_counter() - started >= 0.02 * (len(pieces) - 1)


# --- connection reuse ---------------------------------------------------------------------


@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_a_stream_leaves_its_connection_open_for_the_next_request(provider: FakeProvider, style: str) -> None:
    """As the providers serve streams: chunked, kept alive, so a client's pool reuses the
    connection (a port that breaks on that is a finding, not a harness error)."""
    session = provider.session([{"text": "one"}, {"text": "two"}, {"text": "three"}], style)
    payload = json.dumps(minimal_body(style, stream=True)).encode()
    path = session.base_url.split(session.origin, 1)[1] + ("/chat/completions" if style == "openai" else "/messages")
    auth = "".join(f"{name}: {value}\r\n" for name, value in headers_for(style).items())
    request = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{auth}"
               f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload
    host, port = session.origin.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        reader = sock.makefile("rb")
        for expected in ("one", "two", "three"):
            sock.sendall(request)
            status = reader.readline()
            head = {}
            while (line := reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                head[name.strip().lower()] = value.strip()
            assert status.startswith(b"HTTP/1.1 200"), status
            assert head["transfer-encoding"] == "chunked" and "connection" not in head
            body = b""
            while (size := int(reader.readline().split(b";")[0], 16)) > 0:
                body += reader.read(size)
                assert reader.read(2) == b"\r\n"
            assert reader.read(2) == b"\r\n", "the body ends with the last-chunk line"
            text = "".join(e["text"] for e in _stream_texts(body.decode(), style))
            assert text == expected
    assert session.turns_served == 3 and session.violations == []


def _stream_texts(text: str, style: str) -> list[dict[str, str]]:
    if style == "openai":
        return [{"text": assemble_openai(text)["text"]}]
    return [b for b in assemble_anthropic(text)["content"] if b["type"] == "text"]

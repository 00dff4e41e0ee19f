"""Whatever cannot be served gets an immediate error in the provider's envelope and a
recorded violation: never a hang, never a silent pass."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from fake_provider_client import endpoint, headers_for, minimal_body, post

from toolnexus_conformance.fake_provider import FakeProvider, pairing, sessions

FAST_SECONDS = 0.5


def test_beyond_script(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([{"text": "only turn"}], "openai")
    assert post(client, session, minimal_body("openai")).status_code == 200
    started = time.perf_counter()
    response = post(client, session, minimal_body("openai"))
    assert time.perf_counter() - started < FAST_SECONDS
    assert response.status_code == 400, "400, not 5xx: ports retry 5xx"
    assert "script has only 1 turn(s)" in response.json()["error"]["message"]
    assert [(v.code, v.request_index) for v in session.violations] == [
        (sessions.BEYOND_SCRIPT, 1)
    ]
    assert len(session.requests) == 2 and session.turns_served == 1


def test_beyond_script_streaming_anthropic(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([], "anthropic")
    response = post(client, session, minimal_body("anthropic", stream=True))
    assert response.status_code == 400
    assert response.json()["type"] == "error"
    assert session.violations[0].code == sessions.BEYOND_SCRIPT


@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_unknown_session(provider: FakeProvider, client: httpx.Client, style: str) -> None:
    suffix = "/chat/completions" if style == "openai" else "/messages"
    url = f"{provider.base_url}/s/nosuchsession/v1{suffix}"
    before = len(provider.violations)
    started = time.perf_counter()
    response = client.post(url, json=minimal_body(style), headers=headers_for(style))
    assert time.perf_counter() - started < FAST_SECONDS
    assert response.status_code == 404
    if style == "openai":
        assert response.json()["error"]["message"].startswith("Invalid URL (POST /s/nosuchsession")
    else:
        assert response.json()["error"]["type"] == "not_found_error"
    new = provider.violations[before:]
    assert [v.code for v in new] == [sessions.UNKNOWN_SESSION]
    recorded = provider.unrouted_requests[new[0].request_index]
    assert recorded.path == f"/s/nosuchsession/v1{suffix}"
    assert recorded.parsed == minimal_body(style)


def test_path_outside_sessions(provider: FakeProvider, client: httpx.Client) -> None:
    before = len(provider.violations)
    response = client.get(f"{provider.base_url}/v1/models")
    assert response.status_code == 404
    assert provider.violations[before].code == sessions.UNKNOWN_SESSION


def test_ended_session_is_unknown(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([{"text": "a"}, {"text": "b"}], "openai")
    provider.end_session(session)
    assert post(client, session, minimal_body("openai")).status_code == 404
    assert session.requests == []


@pytest.mark.parametrize(
    ("style", "path"),
    [
        ("openai", "/messages"),
        ("openai", "/completions"),
        ("anthropic", "/chat/completions"),
        ("anthropic", "/v1/messages"),  # base already ends with /v1: this is /v1/v1/messages
    ],
)
def test_wrong_path_in_session(
    provider: FakeProvider, client: httpx.Client, style: str, path: str
) -> None:
    session = provider.session([{"text": "ok"}], style)
    response = client.post(session.base_url + path, json=minimal_body(style), headers=headers_for(style))
    assert response.status_code == 404
    assert [v.code for v in session.violations] == [sessions.UNKNOWN_PATH]
    assert session.requests[0].status == 404


@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_wrong_method(provider: FakeProvider, client: httpx.Client, style: str) -> None:
    session = provider.session([{"text": "ok"}], style)
    response = client.get(endpoint(session), headers=headers_for(style))
    assert response.status_code == 405
    assert [v.code for v in session.violations] == [sessions.METHOD_NOT_ALLOWED]


@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_bad_json_body(provider: FakeProvider, client: httpx.Client, style: str) -> None:
    session = provider.session([{"text": "ok"}], style)
    started = time.perf_counter()
    response = post(client, session, b'{"model": "m", "messages": [')
    assert time.perf_counter() - started < FAST_SECONDS
    assert response.status_code == 400
    assert [v.code for v in session.violations] == [pairing.BODY_INVALID_JSON]
    assert session.requests[0].body == b'{"model": "m", "messages": ['
    assert session.requests[0].parsed is None


@pytest.mark.parametrize(
    ("style", "headers", "status", "code"),
    [
        ("openai", {}, 401, sessions.MISSING_API_KEY),
        ("openai", {"Authorization": "Basic abc"}, 401, sessions.MISSING_API_KEY),
        ("anthropic", {"anthropic-version": "2023-06-01"}, 401, sessions.MISSING_API_KEY),
        ("anthropic", {"x-api-key": "k"}, 400, sessions.ANTHROPIC_MISSING_VERSION),
    ],
)
def test_missing_credentials(
    provider: FakeProvider,
    client: httpx.Client,
    style: str,
    headers: dict[str, str],
    status: int,
    code: str,
) -> None:
    session = provider.session([{"text": "ok"}], style)
    response = post(client, session, minimal_body(style), headers=headers)
    assert response.status_code == status
    assert [v.code for v in session.violations] == [code]


def test_chunked_request_body(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([{"text": "ok"}], "openai")

    def pieces() -> Iterator[bytes]:
        yield b'{"model": "m", '
        yield b'"messages": [{"role": "user", "content": "hi"}]}'

    response = client.post(
        endpoint(session),
        content=pieces(),
        headers={**headers_for("openai"), "Content-Type": "application/json"},
    )
    assert response.status_code == 200, response.text
    assert session.requests[0].parsed["model"] == "m"


def test_error_keeps_connection_usable(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([{"text": "ok"}], "openai")
    assert post(client, session, b"not json").status_code == 400
    assert post(client, session, minimal_body("openai")).status_code == 200


def test_expect_100_continue_is_answered(provider: FakeProvider) -> None:
    """Some HTTP clients send Expect: 100-continue and wait for the interim reply."""
    session = provider.session([{"text": "ok"}], "openai")
    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
    path = session.base_url.split(str(provider.port), 1)[1] + "/chat/completions"
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Expect: 100-continue\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((provider.host, provider.port), timeout=FAST_SECONDS) as conn:
        conn.sendall(head)
        assert conn.recv(64).startswith(b"HTTP/1.1 100")
        conn.sendall(body)
        reply = b""
        while chunk := conn.recv(4096):
            reply += chunk
    assert reply.split(b"\r\n", 1)[0].endswith(b"200 OK")
    assert session.turns_served == 1

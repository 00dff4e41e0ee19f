"""Sessions: isolation under concurrency, redaction of credentials, script checking,
and the server's loopback-only binding and clean shutdown."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest
from fake_provider_client import ANTHROPIC_KEY, OPENAI_KEY, minimal_body, post

from toolnexus_conformance.fake_provider import FakeProvider, ScriptError


def test_api_keys_redacted(provider: FakeProvider, client: httpx.Client) -> None:
    openai_session = provider.session([{"text": "a"}], "openai")
    anthropic_session = provider.session([{"text": "b"}], "anthropic")
    post(client, openai_session, minimal_body("openai"))
    post(client, anthropic_session, minimal_body("anthropic"))
    openai_headers = openai_session.requests[0].headers
    anthropic_headers = anthropic_session.requests[0].headers
    assert openai_headers["authorization"] == "Bearer <redacted>"
    assert anthropic_headers["x-api-key"] == "<redacted>"
    assert anthropic_headers["anthropic-version"] == "2023-06-01"
    for recorded in (openai_session.requests[0], anthropic_session.requests[0]):
        assert OPENAI_KEY not in repr(recorded) and ANTHROPIC_KEY not in repr(recorded)


def test_header_names_lower_cased_and_body_kept(provider: FakeProvider, client: httpx.Client) -> None:
    session = provider.session([{"text": "a"}], "openai")
    post(client, session, minimal_body("openai"), headers={"AUTHORIZATION": "Bearer x", "X-Custom": "1"})
    recorded = session.requests[0]
    assert recorded.method == "POST"
    assert recorded.path.endswith("/v1/chat/completions")
    assert recorded.headers["x-custom"] == "1"
    assert recorded.parsed == minimal_body("openai")
    assert recorded.json_body() == minimal_body("openai")
    assert session.bodies() == [minimal_body("openai")]


def test_concurrent_sessions_are_isolated(provider: FakeProvider) -> None:
    count = 20
    scripts = {
        style: [{"text": f"{style}-{i}"} for i in range(count)] for style in ("openai", "anthropic")
    }
    sessions = {style: provider.session(script, style) for style, script in scripts.items()}
    texts: dict[str, list[str]] = {style: [] for style in sessions}
    errors: list[BaseException] = []

    def drive(style: str) -> None:
        try:
            with httpx.Client(timeout=5.0) as http:
                for _ in range(count):
                    body = post(http, sessions[style], minimal_body(style)).json()
                    if style == "openai":
                        texts[style].append(body["choices"][0]["message"]["content"])
                    else:
                        texts[style].append(body["content"][0]["text"])
        except BaseException as exc:  # surfaced in the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=drive, args=(style,)) for style in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert errors == []
    for style, session in sessions.items():
        assert texts[style] == [turn["text"] for turn in scripts[style]]
        assert session.turns_served == count and len(session.requests) == count
        assert session.violations == []
        assert [r.index for r in session.requests] == list(range(count))


def test_many_requests_to_one_session_in_parallel(
    provider: FakeProvider, client: httpx.Client
) -> None:
    count = 16
    session = provider.session([{"text": str(i)} for i in range(count)], "openai")
    seen: list[str] = []
    lock = threading.Lock()

    def one() -> None:
        reply = post(client, session, minimal_body("openai")).json()
        text = reply["choices"][0]["message"]["content"]
        with lock:
            seen.append(text)

    threads = [threading.Thread(target=one) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert sorted(seen, key=int) == [str(i) for i in range(count)], "each turn served exactly once"


def test_base_urls_are_distinct_and_on_loopback(provider: FakeProvider) -> None:
    first = provider.session([], "openai")
    second = provider.session([], "openai")
    assert first.base_url != second.base_url
    assert first.base_url.startswith(f"http://127.0.0.1:{provider.port}/s/")
    assert first.base_url.endswith("/v1")


def test_binds_loopback_only() -> None:
    with FakeProvider() as provider:
        assert provider.host == "127.0.0.1"
        other = _non_loopback_address()
        if other is None:
            pytest.skip("this machine has no non-loopback IPv4 address to probe")
        with pytest.raises(OSError):
            socket.create_connection((other, provider.port), timeout=1).close()


def test_stop_is_quick_with_an_idle_keep_alive_connection() -> None:
    provider = FakeProvider().start()
    session = provider.session([{"text": "a"}], "openai")
    http = httpx.Client()
    assert post(http, session, minimal_body("openai")).status_code == 200
    started = time.perf_counter()
    provider.stop()
    assert time.perf_counter() - started < 2.0
    http.close()
    with pytest.raises(RuntimeError, match="not running"):
        _ = provider.base_url


@pytest.mark.parametrize(
    ("script", "style", "fragment"),
    [
        ("not a list", "openai", "script: must be a list"),
        ([{"txt": "typo"}], "openai", "unknown key(s) txt"),
        ([{"toolCalls": [{"id": "c", "name": "n", "arguments": {"a": 1}}]}], "openai", "arguments: must be a string"),
        ([{"usage": {"input": -1}}], "openai", "usage.input"),
        ([{"toolCalls": [{"id": "c", "name": "n", "arguments": "{bad"}]}], "anthropic", "not valid JSON"),
        ([{"toolCalls": [{"id": "c", "name": "n", "arguments": "[1]"}]}], "anthropic", "must be a JSON object"),
    ],
)
def test_bad_scripts_are_refused_in_one_line(
    provider: FakeProvider, script: object, style: str, fragment: str
) -> None:
    with pytest.raises(ScriptError) as caught:
        provider.session(script, style)  # type: ignore[arg-type]
    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)


def test_raw_openai_arguments_need_not_parse(provider: FakeProvider, client: httpx.Client) -> None:
    """OpenAI sends arguments as text, so a script may exercise a malformed one."""
    session = provider.session([{"toolCalls": [{"id": "c", "name": "n", "arguments": "{bad"}]}], "openai")
    body = post(client, session, minimal_body("openai")).json()
    assert body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == "{bad"


def test_unknown_style(provider: FakeProvider) -> None:
    with pytest.raises(ValueError, match="unknown provider style"):
        provider.session([], "gemini")


def _non_loopback_address() -> str | None:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: no packet is sent for UDP connect
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address

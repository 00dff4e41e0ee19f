"""The §8 loop on a PlainHTTPClient against the loop on httpx, whole runs over loopback:
the same RunResult, stream events and raw requests, and the same ProviderError words for a
non-2xx status, a body that is not JSON, a refused connection and a dropped request. A
client broken on purpose (a status error read from the wrong text) fails the check. The
fast client is installed as a forked shim's zygote installs it (``fast_client_installed``)."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest
from fast_http import PlainHTTPClient
from rawserver import DROP, Reply, json_reply, serving, sse_reply

from reference_py import ProviderError, create_client, create_toolkit
from reference_py.transport import httpx_client as new_http_client

pytestmark = pytest.mark.usefixtures("each_event_loop", "fast_client_installed")

OPENAI_JSON = json_reply(json.dumps({
    "choices": [{"message": {"role": "assistant", "content": "hi \u00e9"}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}).encode())
OPENAI_SSE = sse_reply(
    b'data: {"choices":[{"delta":{"content":"h"}}]}\r\n\r\n',
    b'data: {"choices":[{"delta":{"content":"i \xc3',
    b'\xa9"}}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}\r\n\r\ndata: [DONE]\r\n\r\n',
    pause_s=0.002)
ANTHROPIC_JSON = json_reply(json.dumps({
    "id": "m", "type": "message", "role": "assistant", "model": "m", "content": [{"type": "text", "text": "hi"}],
    "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}}).encode())


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


ANTHROPIC_SSE = sse_reply(
    _event("message_start", {"type": "message_start", "message": {"id": "m", "role": "assistant", "content": [],
                                                                   "usage": {"input_tokens": 1, "output_tokens": 0}}}),
    _event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    _event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}),
    _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
    _event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}),
    _event("message_stop", {"type": "message_stop"}))


def run_loop(make: Any, style: str, replies: list[Reply], entries: list[str], base_url: str | None = None) -> dict[str, Any]:
    """Results (or ProviderError words) of ``entries`` on one shared client, and the raw requests."""
    with serving(replies) as server:
        base = base_url or server.url + "/v1"

        async def go() -> list[Any]:
            async with make() as http:
                client = create_client(base_url=base, style=style, model="m", api_key="sk-test", http_client=http)
                toolkit = await create_toolkit()
                seen: list[Any] = []
                for entry in entries:
                    try:
                        if entry == "stream":
                            seen.append([event async for event in client.stream("hello", toolkit)])
                        else:
                            seen.append((await client.run("hello", toolkit)).to_wire())
                    except ProviderError as exc:
                        seen.append(f"ProviderError: {exc}")
                return seen

        results = asyncio.run(go())
        port = str(server.port)
        return json.loads(json.dumps({"results": results, "requests": [(n, raw.decode()) for n, raw in server.requests]})
                          .replace(port, "PORT"))


def assert_loop_same(style: str, replies: list[Reply], entries: list[str], base_url: str | None = None,
                     plain: Any = PlainHTTPClient) -> dict[str, Any]:
    expected = run_loop(new_http_client, style, replies, entries, base_url)
    got = run_loop(plain, style, replies, entries, base_url)
    assert got == expected, f"the loop on the plain client differs:\nhttpx {expected}\nplain {got}"
    return got


@pytest.mark.parametrize(("style", "replies"), [
    ("openai", [OPENAI_JSON, OPENAI_SSE, OPENAI_JSON]),
    ("anthropic", [ANTHROPIC_JSON, ANTHROPIC_SSE, ANTHROPIC_JSON]),
])
def test_runs_and_streams_are_the_same(style: str, replies: list[Reply]) -> None:
    seen = assert_loop_same(style, replies, ["run", "stream", "run"])
    assert [n for n, _ in seen["requests"]] == [0, 0, 1], "the JSON reply keeps its connection, the stream ends it"


ERRORS = {
    "503": ([json_reply(b'{"error":  {"message": "overloaded"}}', "503 Service Unavailable")], "ProviderError: LLM 503: "),
    "503 on a stream": ([json_reply(b"down\n  for now", "503 Service Unavailable")], "ProviderError: LLM 503: down for now"),
    "not JSON": ([json_reply(b"<html>" + b"x" * 300 + b"</html>")], "ProviderError: LLM response is not JSON: <html>"),
    "dropped": ([DROP], "ProviderError: LLM request to http://127.0.0.1:PORT/v1/chat/completions failed: RemoteProtocolError"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_provider_errors_read_the_same(case: str) -> None:
    replies, start = ERRORS[case]
    entry = "stream" if "stream" in case else "run"
    seen = assert_loop_same("openai", replies, [entry])
    assert seen["results"][0].startswith(start), seen["results"][0]


def test_a_refused_connection_reads_the_same() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    seen = assert_loop_same("openai", [], ["run"], base_url=f"http://127.0.0.1:{port}/v1")
    assert seen["results"] == [f"ProviderError: LLM request to http://127.0.0.1:{port}/v1/chat/completions failed: "
                               "ConnectError: All connection attempts failed"]


class _WrongText(PlainHTTPClient):
    """Broken on purpose: a response's text drops its first character."""

    async def post(self, url: str, **sent: Any) -> Any:
        response = await super().post(url, **sent)
        response.__class__ = type("Shifted", (type(response),), {"text": property(lambda r: r.content.decode()[1:])})
        return response


def test_the_loop_check_fails_a_broken_client() -> None:
    with pytest.raises(AssertionError, match="differs"):
        assert_loop_same("openai", ERRORS["503"][0], ["run"], plain=_WrongText)

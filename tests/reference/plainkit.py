"""Runs the same requests through httpx (``new_http_client``) and reference_py's
``PlainHTTPClient`` against the same scripted replies, and compares what each saw: the raw
requests the server received (on which connection), and per request the status, text, JSON
or lines, or the error's class name and message."""

from __future__ import annotations

import asyncio
import json
import pprint
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fast_http import PlainHTTPClient
from rawserver import Reply, serving

from reference_py.transport import encode_body
from reference_py.transport import httpx_client as new_http_client

OPENAI_HEADERS = {"Authorization": "Bearer sk-test", "Content-Type": "application/json"}
ANTHROPIC_HEADERS = {"x-api-key": "sk-test", "anthropic-version": "2023-06-01", "Content-Type": "application/json"}
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
NO_BODY = "no body"  # an Action body that posts json=None
PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Action:
    """One request: ``post`` (whole response) or ``stream`` (lines as they come); or
    ``pause``: 50 ms without a request (a server's close reaches the client meanwhile)."""

    mode: str = "post"
    body: Any = None
    headers: dict[str, str] | None = None
    content: bool = False  # the body as bytes (``content=``, as reference_py's loop sends it), not ``json=``


@dataclass
class Seen:
    outcomes: list[dict[str, Any]]
    requests: list[tuple[int, bytes]]


async def outcome(client: Any, url: str, action: Action) -> dict[str, Any]:
    """What a caller of ``client`` observes for one request."""
    if action.mode == "pause":
        await asyncio.sleep(0.05)
        return {"paused": True}
    body = BODY if action.body is None else None if action.body == NO_BODY else action.body
    headers = OPENAI_HEADERS if action.headers is None else action.headers
    sent: dict[str, Any] = {"content": encode_body(body)} if action.content else {"json": body}
    try:
        if action.mode == "stream":
            async with client.stream("POST", url, headers=headers, **sent) as response:
                lines = [line async for line in response.aiter_lines()]
                return {"status": response.status_code, "success": response.is_success, "lines": lines}
        response = await client.post(url, headers=headers, **sent)
        seen: dict[str, Any] = {"status": response.status_code, "success": response.is_success, "text": response.text}
        try:
            seen["json"] = response.json()
        except ValueError as exc:
            seen["json"] = f"{type(exc).__name__}: {exc}"
        return seen
    except Exception as exc:  # noqa: BLE001 - the error is the observable here
        return {"error": f"{type(exc).__name__}: {exc}"}


ClientFactory = Callable[[], Any]


def run_client(make: ClientFactory, replies: Sequence[Reply], actions: Sequence[Action], url: str | None = None) -> Seen:
    """Send ``actions`` in order through one client against a fresh server."""
    with serving(replies) as server:
        target = url or server.url + PATH

        async def go() -> list[dict[str, Any]]:
            async with make() as client:
                return [await outcome(client, target, action) for action in actions]

        outcomes = asyncio.run(go())
        port = str(server.port).encode()
        requests = [(n, raw.replace(b"127.0.0.1:" + port, b"127.0.0.1:PORT")) for n, raw in server.requests]
    return Seen(json.loads(json.dumps(outcomes).replace(str(server.port), "PORT")), requests)


def plain_client() -> PlainHTTPClient:
    return PlainHTTPClient()


def assert_same(replies: Sequence[Reply], actions: Sequence[Action], url: str | None = None,
                plain: ClientFactory = plain_client, reference: ClientFactory = new_http_client) -> Seen:
    """The plain client and httpx saw the same; returns what they saw."""
    expected = run_client(reference, replies, actions, url)
    got = run_client(plain, replies, actions, url)
    assert got.requests == expected.requests, (
        "the server received different requests:\nhttpx:\n" + pprint.pformat(expected.requests)
        + "\nplain:\n" + pprint.pformat(got.requests)
    )
    assert got.outcomes == expected.outcomes, (
        "the callers observed different results:\nhttpx:\n" + pprint.pformat(expected.outcomes)
        + "\nplain:\n" + pprint.pformat(got.outcomes)
    )
    return got


def retry_again(monkeypatch: Any) -> None:
    """Break the plain client on purpose: a request whose connection closed before the
    response is sent once more after its own retry failed too (the retry rule allows one)."""
    from fast_http.errors import RemoteProtocolError

    original = PlainHTTPClient._send

    async def again(self: PlainHTTPClient, *args: Any) -> Any:
        try:
            return await original(self, *args)
        except RemoteProtocolError:
            return await original(self, *args)

    monkeypatch.setattr(PlainHTTPClient, "_send", again)

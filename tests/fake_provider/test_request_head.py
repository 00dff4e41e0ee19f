"""The fake provider's request-head reader (toolnexus_conformance/fake_provider/request_head.py) reads
header fields exactly as the stdlib's email-based reader does, on plain heads and odd ones,
and the server built on it answers malformed and oversized heads as the stdlib handler did."""

from __future__ import annotations

import http.client
import io
import socket
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.fake_provider.request_head import (
    MAX_FIELDS,
    MAX_LINE,
    Fields,
    Refusal,
    RequestLine,
    parse_fields,
    plain_fields,
    read_field_lines,
    request_line,
)

HEADS = {
    "httpx": b"Host: 127.0.0.1:41234\r\nAccept: */*\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n"
             b"User-Agent: python-httpx/0.28.1\r\nAuthorization: Bearer sk\r\nContent-Length: 12\r\n"
             b"Content-Type: application/json\r\n\r\n",
    "go": b"Host: 127.0.0.1:41234\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 12\r\nX-Api-Key: sk\r\n"
          b"Anthropic-Version: 2023-06-01\r\nAccept-Encoding: gzip\r\n\r\n",
    "java-upgrade": b"Connection: Upgrade, HTTP2-Settings\r\nContent-Length: 12\r\nHost: 127.0.0.1:41234\r\n"
                    b"HTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA\r\nUpgrade: h2c\r\n\r\n",
    "duplicates": b"X-A: 1\r\nx-a: 2\r\nX-A:3\r\n\r\n",
    "spacing": b"X-Pad:   lots of room   \r\nX-Tab:\tvalue\r\nX-Empty:\r\nX-Colon: a:b:c\r\n\r\n",
    "lf-only": b"Host: h\nX-A: 1\n\n",
    "latin-1": b"X-Name: caf\xe9\r\n\r\n",
    "folded": b"X-Long: first\r\n  second\r\nHost: h\r\n\r\n",
    "no-colon": b"Host: h\r\nnot a header line\r\nX-A: 1\r\n\r\n",
    "space-in-name": b"Bad Name: v\r\nHost: h\r\n\r\n",
    "bare-cr": b"X-A: one\rtwo\r\nHost: h\r\n\r\n",
    "empty-name": b": nameless\r\nHost: h\r\n\r\n",
    "unix-from": b"From nobody\r\nHost: h\r\n\r\n",
    "end-of-input": b"Host: h\r\nX-A: 1\r\n",
    "none": b"\r\n",
}


def stdlib(head: bytes) -> http.client.HTTPMessage:
    return http.client.parse_headers(io.BytesIO(head))


def check_reads_like_stdlib(parse: Callable[[list[bytes]], Any], head: bytes) -> None:
    want = stdlib(head)
    got = parse(read_field_lines(io.BytesIO(head)))
    assert got.items() == want.items(), f"items differ for {head!r}"
    for name in {n.lower() for n in want.keys()} | {"host", "connection", "x-missing"}:
        assert got.get(name) == want.get(name), f"get({name!r}) differs for {head!r}"
        assert got.get(name.upper()) == want.get(name.upper())


@pytest.mark.parametrize("head", HEADS.values(), ids=HEADS.keys())
def test_every_head_reads_as_the_stdlib_reads_it(head: bytes) -> None:
    check_reads_like_stdlib(parse_fields, head)


@pytest.mark.parametrize("name", ["httpx", "go", "java-upgrade", "duplicates", "spacing", "lf-only", "latin-1"])
def test_plain_heads_are_read_here(name: str) -> None:
    assert isinstance(plain_fields(read_field_lines(io.BytesIO(HEADS[name]))), Fields)


@pytest.mark.parametrize("name", ["folded", "no-colon", "space-in-name", "bare-cr", "empty-name", "unix-from"])
def test_odd_heads_go_to_the_stdlib(name: str) -> None:
    assert plain_fields(read_field_lines(io.BytesIO(HEADS[name]))) is None


def _keeps_leading_space(lines: list[bytes]) -> Any:
    pairs = [tuple(line.decode("latin-1").rstrip("\r\n").split(":", 1)) for line in lines if line.strip()]
    return Fields([(k, v) for k, v in pairs])  # type: ignore[misc]


def _case_sensitive(lines: list[bytes]) -> Any:
    fields = plain_fields(lines)
    assert fields is not None

    class Exact(Fields):
        def get(self, name: str, default: str | None = None) -> str | None:
            return next((v for k, v in self.items() if k == name), default)

    return Exact(fields.items())


@pytest.mark.parametrize("broken", [_keeps_leading_space, _case_sensitive], ids=["keeps-leading-space", "case-sensitive"])
def test_the_comparison_fails_a_reader_that_differs(broken: Callable[[list[bytes]], Any]) -> None:
    with pytest.raises(AssertionError):
        check_reads_like_stdlib(broken, HEADS["httpx"])


_TEXT = st.text(alphabet=st.sampled_from(list("Aa-_:; \t\r\nxé0") + ["\x7f", "\x01"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_TEXT, _TEXT), max_size=6), st.sampled_from([b"\r\n", b"\n"]))
def test_any_head_reads_as_the_stdlib_reads_it(fields: list[tuple[str, str]], end: bytes) -> None:
    lines = [f"{name}:{value}".encode("latin-1", errors="replace") + end for name, value in fields]
    head = b"".join(line for line in lines if line.strip()) + end
    check_reads_like_stdlib(parse_fields, head)


@pytest.mark.parametrize(("text", "want"), [
    ("POST /s/1/v1/messages HTTP/1.1", RequestLine("POST", "/s/1/v1/messages", "HTTP/1.1", (1, 1))),
    ("GET //evil.example/x HTTP/1.0", RequestLine("GET", "/evil.example/x", "HTTP/1.0", (1, 0))),
    ("", Refusal(0)),
    ("GET /x", Refusal(400, "Bad request syntax ('GET /x')")),
    ("GET /x HTTP/1.1 extra", Refusal(400, "Bad request syntax ('GET /x HTTP/1.1 extra')")),
    ("GET /x HTTP/1.x", Refusal(400, "Bad request version ('HTTP/1.x')")),
    ("GET /x HTTP/١.1", Refusal(400, "Bad request version ('HTTP/١.1')")),
    ("GET /x HTTP/2.0", Refusal(505, "Invalid HTTP version (2.0)")),
])
def test_request_lines(text: str, want: RequestLine | Refusal) -> None:
    assert request_line(text) == want


def _exchange(provider: FakeProvider, head: bytes) -> bytes:
    with socket.create_connection((provider.host, provider.port), timeout=5) as conn:
        conn.sendall(head)
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    return reply


@pytest.mark.parametrize(("head", "status"), [
    (b"GET /x HTTP/1.1\r\nX-Big: " + b"x" * MAX_LINE + b"\r\n\r\n", b"431"),
    (b"GET /x HTTP/1.1\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(MAX_FIELDS + 1)) + b"\r\n", b"431"),
    (b"GET /x HTTP/9.9\r\n\r\n", b"505"),
    (b"BREW\r\n\r\n", b"400"),
], ids=["line-too-long", "too-many-headers", "http-9", "one-word"])
def test_the_server_refuses_a_bad_head_with_its_status(provider: FakeProvider, head: bytes, status: bytes) -> None:
    # A refused request line leaves the version at HTTP/0.9, as in the stdlib's handler: the
    # error page then comes without a status line, so the page's own words are read.
    assert b"Error code: " + status in _exchange(provider, head)


def test_an_odd_head_still_reaches_the_router(provider: FakeProvider) -> None:
    session = provider.session([{"text": "ok"}], "openai")
    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
    path = session.base_url.split(str(provider.port), 1)[1] + "/chat/completions"
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\nX-Folded: one\r\n two\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    reply = _exchange(provider, head + body)
    assert reply.split(b"\r\n", 1)[0].endswith(b"200 OK")
    assert session.turns_served == 1

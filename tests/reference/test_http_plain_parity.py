"""reference_py's PlainHTTPClient against httpx on the same requests over loopback: the
server receives byte-identical requests on the same connections, and the caller observes
the same statuses, texts, JSON, lines and errors (tests/reference/plainkit.py). Each kind
of check is also run against a deliberately broken plain client and must fail."""

from __future__ import annotations

import gzip
import socket
import zlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fast_http import PlainHTTPClient
from fast_http import plain as http_plain
from fast_http import text as http_text
from fast_http import wire as http_wire
from plainkit import ANTHROPIC_HEADERS, NO_BODY, OPENAI_HEADERS, Action, assert_same, retry_again, run_client
from rawserver import DROP, Reply, chunked_reply, json_reply, sse_reply

pytestmark = pytest.mark.usefixtures("each_event_loop")

OK = json_reply(b'{"choices":[{"message":{"role":"assistant","content":"hi"}}]}')
POST, STREAM = Action("post"), Action("stream")
ODD_BODY = {
    "model": "m\u00e9", "messages": [{"role": "user", "content": "caf\u00e9 \u2028 \U0001f600 \"q\" \\ </"}],
    "n": 1.0, "big": 1e20, "small": -0.0, "flags": [True, False, None], "empty": {}, "nested": {"b": [], "a": ""},
}
SSE = b'data: {"a":1}\r\n\r\ndata: {"b":"\xc3\xa9"}\r\n\r\nevent: x\rdata: [DONE]\n\nlast line'


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data)


def _deflate(data: bytes, raw: bool = False) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS if raw else zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def _encoded(body: bytes, encoding: str) -> Reply:
    return json_reply(body, headers=("Content-Type: application/json", f"Content-Encoding: {encoding}"))


CASES: dict[str, tuple[list[Reply], list[Action]]] = {
    "keep-alive: two requests, one connection": ([OK, OK], [POST, POST]),
    "request body: unicode, floats, nesting": ([OK], [Action("post", ODD_BODY)]),
    "request headers: anthropic's": ([OK], [Action("post", headers=ANTHROPIC_HEADERS)]),
    "request headers: a caller's Accept replaces httpx's": ([OK], [Action("post", headers={"accept": "text/event-stream", **OPENAI_HEADERS})]),
    "request: json=None sends no body": ([OK], [Action("post", NO_BODY)]),
    "request body as bytes (content=, the loop's way)": ([OK], [Action("post", ODD_BODY, content=True)]),
    "request body as bytes, streamed": ([sse_reply(SSE), OK], [Action("stream", {"stream": True}, content=True), POST]),
    "request body as bytes, no Content-Type given": ([OK], [Action("post", headers={"Authorization": "Bearer k"}, content=True)]),
    "request headers: no Content-Type given": ([OK], [Action("post", headers={"Authorization": "Bearer k"})]),
    "stream: SSE until close, then a new connection": ([sse_reply(SSE), OK], [Action("stream", {"stream": True}), POST]),
    "stream: SSE pieces with pauses": ([sse_reply(*[SSE[i:i + 7] for i in range(0, len(SSE), 7)], pause_s=0.002)], [STREAM]),
    "stream: chunked, lines across chunks, then keep-alive": ([chunked_reply(SSE[:10], SSE[10:31], SSE[31:]), OK], [STREAM, POST]),
    "post: chunked JSON": ([chunked_reply(b'{"a":', b"[1,2]}", content_type="application/json")], [POST]),
    "post: gzip": ([_encoded(_gzip(b'{"a":"gz"}'), "gzip")], [POST]),
    "post: deflate (zlib)": ([_encoded(_deflate(b'{"a":"z"}'), "deflate")], [POST]),
    "post: deflate (raw)": ([_encoded(_deflate(b'{"a":"r"}', raw=True), "deflate")], [POST]),
    "post: gzip then identity, br passed through": ([_encoded(_gzip(b"{}"), "gzip, identity, br")], [POST]),
    "stream: gzip SSE": ([Reply((b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n", _gzip(SSE)), then="close")], [STREAM]),
    "post: bad gzip": ([_encoded(b"{}", "gzip")], [POST]),
    "status: 503 JSON": ([json_reply(b'{"error":"overloaded"}', "503 Service Unavailable")], [POST]),
    "status: 400 latin-1 text": ([json_reply(b"caf\xe9", "400 Bad Request", ("Content-Type: text/plain; charset=ISO-8859-1",))], [POST]),
    "status: unknown charset falls back to UTF-8": ([json_reply("é".encode(), "200 OK", ('Content-Type: text/plain; charset="nope"',))], [POST]),
    "status: 503 on a stream": ([json_reply(b"down", "503 Service Unavailable")], [STREAM]),
    "status: 204 without body, then keep-alive": ([Reply((b"HTTP/1.1 204 No Content\r\n\r\n",)), OK], [POST, POST]),
    "status: 100 Continue before the response": ([Reply((b"HTTP/1.1 100 Continue\r\n\r\n" + OK.pieces[0],))], [POST]),
    "status: HTTP/1.0 body until close": ([Reply((b"HTTP/1.0 200 OK\r\n\r\n{}",), then="close"), OK], [POST, POST]),
    "status: Connection: close": ([json_reply(b"{}", headers=("Connection: close",)), OK], [POST, POST]),
    "status: LF line ends, no reason, folded header": ([Reply((b"HTTP/1.1 200\nX-A: 1\n  2\nContent-Length: 2\n\n{}",))], [POST]),
    "json: not JSON": ([json_reply(b"<html>not json</html>")], [POST]),
    "json: empty body": ([json_reply(b"")], [POST]),
    "error: no response on a new connection": ([DROP], [POST]),
    "error: body shorter than Content-Length": ([Reply((b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",), then="close")], [POST]),
    "error: chunked body cut short": ([Reply((b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",), then="close")], [STREAM]),
    "error: bad chunk size": ([Reply((b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n",))], [POST]),
    "error: no CRLF after chunk data": ([Reply((b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY0\r\n\r\n",), then="close")], [POST]),
    "chunked: extensions and trailers": ([chunked_reply(b"{}"), Reply((b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;ext=1 \r\n{}\r\n0\r\nX-T: 1\r\n\r\n",))], [POST, POST]),
    "error: bad status line": ([Reply((b"garbage\r\n\r\n",), then="close")], [POST]),
    "error: bad Content-Length": ([Reply((b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n{}",), then="close")], [POST]),
    "error: Transfer-Encoding other than chunked": ([Reply((b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n{}",), then="close")], [POST]),
    "error: illegal header value (empty api key)": ([OK], [Action("post", headers={"Authorization": "Bearer ", "Content-Type": "application/json"})]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_plain_client_matches_httpx(case: str) -> None:
    replies, actions = CASES[case]
    assert_same(replies, actions)


def test_a_refused_connection_reads_the_same() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    seen = assert_same([], [POST], url=f"http://127.0.0.1:{closed_port}/v1/chat/completions")
    assert seen.outcomes == [{"error": "ConnectError: All connection attempts failed"}]


def test_a_silent_server_times_out_the_same() -> None:
    import httpx

    from reference_py.transport import LazyTLSTransport

    silent = [Reply((b"HTTP/1.1 200 OK\r\n",), then="keep", pause_s=1.0)]
    seen = assert_same(silent, [POST], plain=lambda: PlainHTTPClient(timeout=0.3),
                       reference=lambda: httpx.AsyncClient(timeout=0.3, transport=LazyTLSTransport()))
    assert seen.outcomes == [{"error": "ReadTimeout: "}]


def test_a_non_ascii_header_fails_before_sending_as_with_httpx() -> None:
    seen = assert_same([OK], [Action("post", headers={"Authorization": "Bearer \u00e9"})])
    assert seen.requests == [] and seen.outcomes[0]["error"].startswith("UnicodeEncodeError:")


def test_urls_the_plain_client_does_not_send_go_to_httpx() -> None:
    for url in ["https://127.0.0.1:1/v1", "http://u:p@127.0.0.1/v1", "http://127.0.0.1/v1?x=1", "http://127.0.0.1/a/../v1",
                "http://127.0.0.1/v1 x", "http://[::1]:8/v1", "http://h\u00e9/v1", "http://127.0.0.1:x/v1"]:
        assert http_wire.plain_url(url) is None, url
    assert http_wire.plain_url("http://LocalHost:80/v1/chat") == http_wire.PlainURL("localhost", 80, "/v1/chat")
    assert http_wire.plain_url("http://127.0.0.1:8080") == http_wire.PlainURL("127.0.0.1", 8080, "/")


def test_a_query_url_through_the_plain_client_is_httpx_exactly() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # nothing listens: the fallback's error is httpx's own class
    seen = run_client(PlainHTTPClient, [], [POST], url=f"http://127.0.0.1:{port}/v1?api-version=1")
    assert seen.outcomes == [{"error": "ConnectError: All connection attempts failed"}]


# ------------------------------------------------------------- the checks catch a broken client

def _broken(monkeypatch: pytest.MonkeyPatch, what: str) -> None:
    if what == "header order":
        original = http_wire.request_fields

        def swapped(*args: Any) -> list[tuple[bytes, bytes]]:
            fields = original(*args)
            return fields[:1] + fields[2:3] + fields[1:2] + fields[3:]

        monkeypatch.setattr("fast_http.plain.request_fields", swapped)
    elif what == "json encoding":
        monkeypatch.setattr("fast_http.plain.encode_json", lambda body: __import__("json").dumps(body).encode())
    elif what == "no keep-alive":
        monkeypatch.setattr(PlainHTTPClient, "release", lambda self, conn: conn.close())
    elif what == "ignores Content-Encoding":
        monkeypatch.setattr(http_text.ContentDecoder, "decode", lambda self, data: data)
    elif what == "ignores charset":
        monkeypatch.setattr("fast_http.plain.text_encoding", lambda head: "utf-8")
    elif what == "chunk boundaries kept":
        original_chunks = http_plain._chunks

        async def with_breaks(conn: Any, timeout: float) -> AsyncIterator[bytes]:
            async for data in original_chunks(conn, timeout):
                yield data + b"\n"

        monkeypatch.setattr(http_plain, "_chunks", with_breaks)
    elif what == "other error words":
        monkeypatch.setattr("fast_http.plain.ConnectError", lambda message: ConnectionError(message))
    elif what == "retries a fresh connection":
        retry_again(monkeypatch)


@pytest.mark.parametrize(("what", "case"), [
    ("header order", "keep-alive: two requests, one connection"),
    ("json encoding", "request body: unicode, floats, nesting"),
    ("no keep-alive", "keep-alive: two requests, one connection"),
    ("ignores Content-Encoding", "post: gzip"),
    ("ignores charset", "status: 400 latin-1 text"),
    ("chunk boundaries kept", "stream: chunked, lines across chunks, then keep-alive"),
    ("retries a fresh connection", "error: no response on a new connection"),
])
def test_the_parity_check_fails_a_broken_client(monkeypatch: pytest.MonkeyPatch, what: str, case: str) -> None:
    _broken(monkeypatch, what)
    replies, actions = CASES[case]
    with pytest.raises(AssertionError, match="different"):
        assert_same(replies, actions)


def test_the_refused_connection_check_fails_other_words(monkeypatch: pytest.MonkeyPatch) -> None:
    _broken(monkeypatch, "other error words")
    with pytest.raises(AssertionError, match="different"):
        test_a_refused_connection_reads_the_same()

"""The fast HTTP client: HTTP/1.1 over asyncio for ``http://`` provider URLs.

httpx (with httpcore, h11 and anyio beneath it) costs several times this client's CPU per
loopback request (benchmarks/http_client_cost.py), and a differential search drives
thousands of provider requests through the reference shims. ``PlainHTTPClient`` is the part of
``httpx.AsyncClient`` the §8 loop uses (``post``, ``stream``, ``aclose``; a response's
``status_code``, ``is_success``, ``text``, ``json()``, ``aread()``, ``aiter_lines()``),
sending the very requests httpx sends and reading responses as httpx reads them (the facts
live in ``wire.py`` and ``text.py``). A URL it cannot send exactly as httpx would (``https://``, user
info, a query, an unusual path) goes to an httpx client made on first use.

Connections are kept alive per origin, at most 20 idle and each for at most 5 s idle
(httpx's defaults), and not reused once the server closed them or sent unasked data (as
httpcore checks). There is no cap on connections open at once (httpx's is 100; the
reference never runs that many requests together). A request whose reused connection
closes before any byte of the response arrives is sent once more on a new connection: the
server closed a connection it had finished with, so it never acted on the request. Every
wait (connect, write, each read) times out after ``timeout`` seconds (120, as the loop's
httpx client).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

from .connection import Connection, NoResponse, Origin
from .errors import ConnectError, ConnectTimeout, RemoteProtocolError
from .text import ContentDecoder, TextLines, decode_text, text_encoding
from .wire import (
    PlainURL,
    ResponseHead,
    encode_json,
    framing,
    keeps_alive,
    parse_head,
    plain_url,
    request_fields,
    request_head,
)

MAX_IDLE_CONNECTIONS = 20  # httpx's default


class PlainResponse:
    """A response whose body is read on demand: streamed, or whole with ``aread``."""

    def __init__(self, head: ResponseHead, conn: Connection, client: PlainHTTPClient, reusable: bool) -> None:
        self.status_code = head.status
        self.http_version = head.http_version
        self.headers = head
        self._framing = framing(head)
        self._conn: Connection | None = conn
        self._client = client
        self._reusable = reusable and keeps_alive(head, self._framing)
        self._content: bytes | None = None

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    @property
    def content(self) -> bytes:
        if self._content is None:
            raise RuntimeError("the response body has not been read (aread)")
        return self._content

    @property
    def text(self) -> str:
        return decode_text(self.content, text_encoding(self.headers))

    def json(self) -> Any:
        return json.loads(self.content)

    async def aread(self) -> bytes:
        if self._content is None:
            self._content = b"".join([piece async for piece in self.aiter_bytes()])
        return self._content

    async def aiter_lines(self) -> AsyncIterator[str]:
        lines = TextLines(text_encoding(self.headers))
        async for piece in self.aiter_bytes():
            for line in lines.feed(piece):
                yield line
        for line in lines.close():
            yield line

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        decoder = ContentDecoder(self.headers)
        async for raw in self._aiter_raw():
            if data := decoder.decode(raw):
                yield data
        if data := decoder.flush():
            yield data

    async def _aiter_raw(self) -> AsyncIterator[bytes]:
        conn, timeout = self._conn, self._client.timeout
        if conn is None:
            raise RuntimeError("the response is closed")
        kind, expected = self._framing.kind, self._framing.length
        if kind == "length":
            left = expected
            while left:
                data = await conn.read_some(timeout, left)
                if not data:
                    raise RemoteProtocolError(
                        "peer closed connection without sending complete message body "
                        f"(received {expected - left} bytes, expected {expected})"
                    )
                left -= len(data)
                yield data
        elif kind == "chunked":
            async for data in _chunks(conn, timeout):
                yield data
        elif kind == "close":
            while data := await conn.read_some(timeout, 1 << 16):
                yield data
        self._finish()

    def _finish(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._reusable:
            self._client.release(conn)
        else:
            conn.close()

    async def aclose(self) -> None:
        """Close the response; a body not read to its end takes the connection with it."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


CRLF = b"\r\n"
_INCOMPLETE_CHUNKED = "peer closed connection without sending complete message body (incomplete chunked read)"


async def _chunks(conn: Connection, timeout: float) -> AsyncIterator[bytes]:
    """The data of a chunked body, piece by piece as it arrives; trailers are skipped."""
    while True:
        line = await conn.read_line(timeout)
        if line is None:
            raise RemoteProtocolError(_INCOMPLETE_CHUNKED)
        size_text = line.split(b";", 1)[0].strip()
        if not (1 <= len(size_text) <= 20) or size_text.strip(b"0123456789abcdefABCDEF"):
            raise RemoteProtocolError(f"illegal chunk header: {bytearray(line + CRLF)!r}")  # h11's words
        left = int(size_text, 16)
        if left == 0:
            while (trailer := await conn.read_line(timeout)) != b"":
                if trailer is None:
                    raise RemoteProtocolError(_INCOMPLETE_CHUNKED)
            return
        while left:
            data = await conn.read_some(timeout, left)
            if not data:
                raise RemoteProtocolError(_INCOMPLETE_CHUNKED)
            left -= len(data)
            yield data
        footer = CRLF
        while footer:  # compared as it arrives, as h11 does
            data = await conn.read_some(timeout, len(footer))
            if not data:
                raise RemoteProtocolError(_INCOMPLETE_CHUNKED)
            if data != footer[: len(data)]:
                raise RemoteProtocolError(f"malformed chunk footer: {bytearray(data)!r} (expected {footer!r})")
            footer = footer[len(data) :]


class PlainHTTPClient:
    """The loop's HTTP client for plain-HTTP providers; share one to keep connections alive."""

    def __init__(self, timeout: float = 120.0) -> None:
        self.timeout = timeout
        self._idle: dict[Origin, list[Connection]] = {}
        self._fallback: Any = None  # the httpx client for URLs this one does not send

    async def __aenter__(self) -> PlainHTTPClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()
        if self._fallback is not None:
            fallback, self._fallback = self._fallback, None
            await fallback.aclose()

    def _httpx(self) -> Any:
        if self._fallback is None:
            from reference_py.transport import httpx_client  # httpx is imported only for such a URL

            self._fallback = httpx_client()
        return self._fallback

    async def post(self, url: str, *, json: Any = None, content: bytes | None = None, headers: dict[str, str]) -> Any:
        """POST ``json``, or the bytes ``content``, and read the whole response."""
        target = plain_url(url)
        if target is None:
            return await self._httpx().post(url, json=json, content=content, headers=headers)
        response = await self._send("POST", target, json, headers, content)
        try:
            await response.aread()
        finally:
            await response.aclose()
        return response

    @contextlib.asynccontextmanager
    async def stream(self, method: str, url: str, *, json: Any = None, content: bytes | None = None,
                     headers: dict[str, str]) -> AsyncIterator[Any]:
        """Send the request (``json``, or the bytes ``content``); the response's body is read
        by the caller inside the block."""
        target = plain_url(url)
        if target is None:
            async with self._httpx().stream(method, url, json=json, content=content, headers=headers) as response:
                yield response
            return
        response = await self._send(method, target, json, headers, content)
        try:
            yield response
        finally:
            await response.aclose()

    async def _send(self, method: str, url: PlainURL, body: Any, headers: dict[str, str],
                    raw: bytes | None = None) -> PlainResponse:
        if raw is None:
            content = encode_json(body)
            fields = request_fields(url, headers, len(content), is_json=body is not None)
        else:
            content = raw
            fields = request_fields(url, headers, len(content), is_json=bool(content), typed=False)
        keep = not any(name.lower() == b"connection" and b"close" in value.lower() for name, value in fields)
        request = (method, url, fields, content, keep)
        conn = self._reused((url.host, url.port))
        if conn is not None:
            try:
                return await self._exchange(conn, *request)
            except NoResponse:
                pass  # the server had closed it: the request never reached it
        try:
            return await self._exchange(await self._connect(url), *request)
        except NoResponse as failed:
            raise failed.error from None

    def _reused(self, origin: Origin) -> Connection | None:
        idle = self._idle.get(origin)
        now = asyncio.get_running_loop().time()
        while idle:
            conn = idle.pop()
            if conn.reusable(now):
                return conn
            conn.close()
        return None

    def release(self, conn: Connection) -> None:
        """Keep a connection whose response was read whole for the next request."""
        if sum(len(conns) for conns in self._idle.values()) >= MAX_IDLE_CONNECTIONS:
            conn.close()
            return
        conn.idle_since = conn.loop.time()
        self._idle.setdefault(conn.origin, []).append(conn)

    async def _connect(self, url: PlainURL) -> Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.timeout):
                _, conn = await loop.create_connection(lambda: Connection(loop, (url.host, url.port)), url.host, url.port)
        except TimeoutError:
            raise ConnectTimeout("") from None
        except socket.gaierror as exc:
            raise ConnectError(str(exc)) from None
        except OSError:
            raise ConnectError("All connection attempts failed") from None  # httpx's words
        return conn

    async def _exchange(
        self, conn: Connection, method: str, url: PlainURL, fields: list[tuple[bytes, bytes]], content: bytes, keep: bool
    ) -> PlainResponse:
        """Write the request and read the response head (informational ones skipped)."""
        try:
            await conn.send(request_head(method, url, fields) + content, self.timeout)
            first = True
            while True:
                head = parse_head(await conn.read_head(self.timeout, first))
                first = False
                if not 100 <= head.status < 200 or head.status == 101:
                    return PlainResponse(head, conn, self, keep)
        except BaseException:
            conn.close()
            raise

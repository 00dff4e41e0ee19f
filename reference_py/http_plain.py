"""reference_py's plain-HTTP client: HTTP/1.1 over asyncio for ``http://`` provider URLs.

httpx (with httpcore, h11 and anyio beneath it) costs ~2.5 ms of CPU per loopback request
and ~0.2 s of imports per process; the conformance harness drives thousands of provider
requests through short-lived reference shims. ``PlainHTTPClient`` is the part of
``httpx.AsyncClient`` the §8 loop uses (``post``, ``stream``, ``aclose``; a response's
``status_code``, ``is_success``, ``text``, ``json()``, ``aread()``, ``aiter_lines()``),
sending the very requests httpx sends and reading responses as httpx reads them (the facts
live in ``http_wire.py``). A URL it cannot send exactly as httpx would (``https://``, user
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
import codecs
import contextlib
import json
import select
import socket
from collections.abc import AsyncIterator
from typing import Any

from .http_wire import (
    HEAD_END,
    ConnectError,
    ConnectTimeout,
    ContentDecoder,
    LineSplitter,
    PlainHTTPError,
    PlainURL,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    ResponseHead,
    WriteError,
    WriteTimeout,
    decode_text,
    encode_json,
    framing,
    keeps_alive,
    parse_head,
    plain_url,
    request_fields,
    request_head,
    text_encoding,
)

KEEPALIVE_EXPIRY_S = 5.0
MAX_IDLE_CONNECTIONS = 20
MAX_HEAD_BYTES = 100 * 1024  # h11's limit for a response head
_PAUSE_READING_AT = 1 << 20  # buffered bytes the reader has not taken yet
Origin = tuple[str, int]


class _NoResponse(Exception):
    """The connection ended before any byte of the response (``error`` says how)."""

    def __init__(self, error: PlainHTTPError) -> None:
        super().__init__(str(error))
        self.error = error


class _Connection(asyncio.Protocol):
    """One TCP connection: a receive buffer the response reader takes bytes from."""

    def __init__(self, loop: asyncio.AbstractEventLoop, origin: Origin) -> None:
        self.loop = loop
        self.origin = origin
        self.transport: asyncio.Transport | None = None
        self.idle_since = 0.0
        self._buffer = bytearray()
        self._eof = False
        self._lost: Exception | None = None  # why it went down, when not a clean close
        self._waiter: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None  # pending while writing is paused
        self._reading_paused = False

    # -- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if len(self._buffer) > _PAUSE_READING_AT and self.transport is not None and not self._reading_paused:
            self.transport.pause_reading()
            self._reading_paused = True
        self._wake()

    def eof_received(self) -> None:
        self._eof = True
        self._wake()  # returning None lets the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._lost = exc
        self._wake()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def pause_writing(self) -> None:
        self._writable = self.loop.create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    # -- state

    def reusable(self, now: float) -> bool:
        """Idle, open, quiet and fresh enough to carry another request."""
        transport = self.transport
        if transport is None or transport.is_closing() or self._eof or self._buffer:
            return False
        if self.loop is not asyncio.get_running_loop() or now - self.idle_since > KEEPALIVE_EXPIRY_S:
            return False
        sock = transport.get_extra_info("socket")
        # readable while idle = the server closed it (or sent what nobody asked for)
        return sock is None or not select.select([sock.fileno()], [], [], 0)[0]

    def close(self) -> None:
        if self.transport is not None:
            with contextlib.suppress(RuntimeError):  # its event loop is already closed
                self.transport.close()

    # -- writing

    async def send(self, data: bytes, timeout: float) -> None:
        assert self.transport is not None
        if self.transport.is_closing():
            raise _NoResponse(RemoteProtocolError("Server disconnected without sending a response."))
        self.transport.write(data)
        if self._writable is not None:
            await self._wait(self._writable, timeout, WriteTimeout)
        if self._lost is not None and not self._buffer:
            raise _NoResponse(WriteError(str(self._lost)))

    # -- reading

    async def _wait(self, future: asyncio.Future[None], timeout: float, timed_out: type[PlainHTTPError]) -> None:
        timer = self.loop.call_later(timeout, _expire, future, timed_out)
        try:
            await future
        finally:
            timer.cancel()

    async def _more(self, timeout: float) -> bool:
        """Wait for more bytes; False once the connection ended cleanly with none new."""
        if self._eof:
            if self._lost is not None:
                raise ReadError(str(self._lost))
            return False
        if self._reading_paused and self.transport is not None:
            self.transport.resume_reading()
            self._reading_paused = False
        self._waiter = self.loop.create_future()
        try:
            await self._wait(self._waiter, timeout, ReadTimeout)
        finally:
            self._waiter = None
        return True

    async def read_head(self, timeout: float, first: bool) -> bytes:
        """The next response head (without its blank line). ``first``: nothing of the
        response has arrived before, so an end now means the request had no response."""
        while (end := HEAD_END.search(self._buffer)) is None:
            if len(self._buffer) > MAX_HEAD_BYTES:
                raise RemoteProtocolError("response head too long")
            nothing_yet = first and not self._buffer
            try:
                more = await self._more(timeout)
            except ReadError as exc:
                if nothing_yet:
                    raise _NoResponse(exc) from None
                raise
            if not more:
                if nothing_yet:
                    raise _NoResponse(RemoteProtocolError("Server disconnected without sending a response."))
                raise RemoteProtocolError("peer closed connection without sending a complete response head")
        block = bytes(self._buffer[: end.start()])
        del self._buffer[: end.end()]
        return block

    async def read_some(self, timeout: float, limit: int) -> bytes:
        """Up to ``limit`` bytes as soon as any are there; b"" at a clean end."""
        while not self._buffer:
            if not await self._more(timeout):
                return b""
        data = bytes(self._buffer[:limit])
        del self._buffer[:limit]
        return data

    async def read_line(self, timeout: float) -> bytes | None:
        """One line without its CRLF (or LF); None when the connection ends first."""
        while (end := self._buffer.find(b"\n")) < 0:
            if len(self._buffer) > MAX_HEAD_BYTES:
                raise RemoteProtocolError("chunk header line too long")
            if not await self._more(timeout):
                return None
        line = bytes(self._buffer[:end]).removesuffix(b"\r")
        del self._buffer[: end + 1]
        return line


def _expire(future: asyncio.Future[None], timed_out: type[PlainHTTPError]) -> None:
    if not future.done():
        future.set_exception(timed_out(""))  # httpx's timeouts carry no message either


class PlainResponse:
    """A response whose body is read on demand: streamed, or whole with ``aread``."""

    def __init__(self, head: ResponseHead, conn: _Connection, client: PlainHTTPClient, reusable: bool) -> None:
        self.status_code = head.status
        self.http_version = head.http_version
        self.headers = head
        self._framing = framing(head)
        self._conn: _Connection | None = conn
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
        splitter = LineSplitter()
        decoder = codecs.getincrementaldecoder(text_encoding(self.headers))(errors="replace")
        async for piece in self.aiter_bytes():
            for line in splitter.feed(decoder.decode(piece)):
                yield line
        for line in splitter.feed(decoder.decode(b"", True)) + splitter.flush():
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


_INCOMPLETE_CHUNKED = "peer closed connection without sending complete message body (incomplete chunked read)"


async def _chunks(conn: _Connection, timeout: float) -> AsyncIterator[bytes]:
    """The data of a chunked body, piece by piece as it arrives; trailers are skipped."""
    while True:
        line = await conn.read_line(timeout)
        if line is None:
            raise RemoteProtocolError(_INCOMPLETE_CHUNKED)
        size_text = line.split(b";", 1)[0].strip()
        if not (1 <= len(size_text) <= 20) or size_text.strip(b"0123456789abcdefABCDEF"):
            raise RemoteProtocolError(f"illegal chunk header: {line!r}")
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
        if (end := await conn.read_line(timeout)) != b"":
            raise RemoteProtocolError(_INCOMPLETE_CHUNKED if end is None else "missing \\r\\n after chunk")


class PlainHTTPClient:
    """The loop's HTTP client for plain-HTTP providers; share one to keep connections alive."""

    def __init__(self, timeout: float = 120.0) -> None:
        self.timeout = timeout
        self._idle: dict[Origin, list[_Connection]] = {}
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
            from .loop import new_http_client  # httpx is imported only for such a URL

            self._fallback = new_http_client()
        return self._fallback

    async def post(self, url: str, *, json: Any, headers: dict[str, str]) -> Any:
        """POST ``json`` and read the whole response."""
        target = plain_url(url)
        if target is None:
            return await self._httpx().post(url, json=json, headers=headers)
        response = await self._send("POST", target, json, headers)
        try:
            await response.aread()
        finally:
            await response.aclose()
        return response

    @contextlib.asynccontextmanager
    async def stream(self, method: str, url: str, *, json: Any, headers: dict[str, str]) -> AsyncIterator[Any]:
        """Send the request; the response's body is read by the caller inside the block."""
        target = plain_url(url)
        if target is None:
            async with self._httpx().stream(method, url, json=json, headers=headers) as response:
                yield response
            return
        response = await self._send(method, target, json, headers)
        try:
            yield response
        finally:
            await response.aclose()

    async def _send(self, method: str, url: PlainURL, body: Any, headers: dict[str, str]) -> PlainResponse:
        content = encode_json(body)
        fields = request_fields(url, headers, len(content))
        keep = not any(name.lower() == b"connection" and b"close" in value.lower() for name, value in fields)
        request = (method, url, fields, content, keep)
        conn = self._reused((url.host, url.port))
        if conn is not None:
            try:
                return await self._exchange(conn, *request)
            except _NoResponse:
                pass  # the server had closed it: the request never reached it
        try:
            return await self._exchange(await self._connect(url), *request)
        except _NoResponse as failed:
            raise failed.error from None

    def _reused(self, origin: Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        now = asyncio.get_running_loop().time()
        while idle:
            conn = idle.pop()
            if conn.reusable(now):
                return conn
            conn.close()
        return None

    def release(self, conn: _Connection) -> None:
        """Keep a connection whose response was read whole for the next request."""
        if sum(len(conns) for conns in self._idle.values()) >= MAX_IDLE_CONNECTIONS:
            conn.close()
            return
        conn.idle_since = conn.loop.time()
        self._idle.setdefault(conn.origin, []).append(conn)

    async def _connect(self, url: PlainURL) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.timeout):
                _, conn = await loop.create_connection(lambda: _Connection(loop, (url.host, url.port)), url.host, url.port)
        except TimeoutError:
            raise ConnectTimeout("") from None
        except socket.gaierror as exc:
            raise ConnectError(str(exc)) from None
        except OSError:
            raise ConnectError("All connection attempts failed") from None  # httpx's words
        return conn

    async def _exchange(
        self, conn: _Connection, method: str, url: PlainURL, fields: list[tuple[bytes, bytes]], content: bytes, keep: bool
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

"""One TCP connection of the fast HTTP client: an ``asyncio.Protocol`` with a
receive buffer the response reader takes bytes from, every wait bounded by a timeout.

It knows when it may be reused (idle, open, quiet, fresh: what httpcore checks before it
reuses a connection) and tells a request that got no byte of response at all
(``NoResponse``) from one that broke halfway: only the first may be sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
from typing import cast

from .errors import PlainHTTPError, ReadError, ReadTimeout, RemoteProtocolError, WriteError, WriteTimeout
from .wire import HEAD_END

KEEPALIVE_EXPIRY_S = 5.0  # httpx's default
MAX_HEAD_BYTES = 100 * 1024  # h11's limit for a response head
_PAUSE_READING_AT = 1 << 20  # bytes received that the reader has not taken yet
Origin = tuple[str, int]


class NoResponse(Exception):
    """The connection ended before any byte of the response (``error`` says how)."""

    def __init__(self, error: PlainHTTPError) -> None:
        super().__init__(str(error))
        self.error = error


class Connection(asyncio.Protocol):
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
        # A stream transport, though not always by class: uvloop's implement asyncio's
        # interface without subclassing it.
        self.transport = cast(asyncio.Transport, transport)

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
        return sock is None or not _readable(sock.fileno())

    def close(self) -> None:
        if self.transport is not None:
            with contextlib.suppress(RuntimeError):  # its event loop is already closed
                self.transport.close()

    # -- writing

    async def send(self, data: bytes, timeout: float) -> None:
        assert self.transport is not None
        if self.transport.is_closing():
            raise NoResponse(RemoteProtocolError("Server disconnected without sending a response."))
        self.transport.write(data)
        if self._writable is not None:
            await self._wait(self._writable, timeout, WriteTimeout)
        if self._lost is not None and not self._buffer:
            raise NoResponse(WriteError(str(self._lost)))

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
                    raise NoResponse(exc) from None
                raise
            if not more:
                if nothing_yet:
                    raise NoResponse(RemoteProtocolError("Server disconnected without sending a response."))
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


def _readable(fd: int) -> bool:
    """Whether reading ``fd`` would not block; poll where there is one, as select() fails
    on a descriptor above FD_SETSIZE (1024) in a process with many files open."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])


def _expire(future: asyncio.Future[None], timed_out: type[PlainHTTPError]) -> None:
    if not future.done():
        future.set_exception(timed_out(""))  # httpx's timeouts carry no message either

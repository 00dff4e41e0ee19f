"""A loopback HTTP/1.1 server for the plain-client parity tests: every request gets the next
scripted reply, written byte for byte (in pieces, with a pause after each), and the server
records each request's raw bytes with the number of the connection it came on.

Unlike the fake provider it writes whatever it is told (bad status lines, short bodies,
chunked bodies, no reply at all), so each client meets the same bytes.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reply:
    """What to write for one request; ``then``: ``keep`` the connection for the next
    request, or ``close`` it. ``pieces=()`` with ``close`` is a request left unanswered."""

    pieces: tuple[bytes, ...]
    then: str = "keep"
    pause_s: float = 0.0


def json_reply(body: bytes, status: str = "200 OK", headers: Sequence[str] = ("Content-Type: application/json",)) -> Reply:
    head = "".join(f"{h}\r\n" for h in headers)
    return Reply((f"HTTP/1.1 {status}\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body,))


def sse_reply(*pieces: bytes, pause_s: float = 0.0, headers: Sequence[str] = ()) -> Reply:
    """An event stream without a length, ended by closing the connection (as the fake provider)."""
    head = "".join(f"{h}\r\n" for h in headers)
    start = f"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n{head}Cache-Control: no-cache\r\nConnection: close\r\n\r\n"
    return Reply((start.encode(), *pieces), then="close", pause_s=pause_s)


def chunked_reply(*chunks: bytes, content_type: str = "text/event-stream", pause_s: float = 0.0) -> Reply:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    body = [b"%x\r\n%s\r\n" % (len(c), c) for c in chunks]
    return Reply((head, *body, b"0\r\n\r\n"), pause_s=pause_s)


DROP = Reply((), then="close")  # read the request, answer nothing, close


@dataclass
class RawServer:
    replies: list[Reply]
    requests: list[tuple[int, bytes]] = field(default_factory=list)  # (connection number, raw request)
    port: int = 0
    _listener: socket.socket | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _open: list[socket.socket] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()
        for conn in list(self._open):
            try:
                conn.close()
            except OSError:
                pass

    def _accept(self) -> None:
        number = 0
        assert self._listener is not None
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._open.append(conn)
            threading.Thread(target=self._serve, args=(conn, number), daemon=True).start()
            number += 1

    def _serve(self, conn: socket.socket, number: int) -> None:
        pending = b""
        with conn:
            while True:
                request, pending = _read_request(conn, pending)
                if request is None:
                    return
                with self._lock:
                    self.requests.append((number, request))
                    reply = self.replies.pop(0) if self.replies else json_reply(b"script exhausted", "500 Internal Server Error")
                try:
                    for piece in reply.pieces:
                        conn.sendall(piece)
                        if reply.pause_s:
                            time.sleep(reply.pause_s)
                    if reply.then == "close":
                        conn.shutdown(socket.SHUT_RDWR)
                        return
                except OSError:  # the client (or stop()) closed it first
                    return


def _read_request(conn: socket.socket, data: bytes) -> tuple[bytes | None, bytes]:
    try:
        while b"\r\n\r\n" not in data:
            more = conn.recv(65536)
            if not more:
                return None, b""
            data += more
        head, _, rest = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(rest) < length:
            more = conn.recv(65536)
            if not more:
                return None, b""
            rest += more
    except OSError:
        return None, b""
    return head + b"\r\n\r\n" + rest[:length], rest[length:]


@contextmanager
def serving(replies: Sequence[Reply]) -> Iterator[RawServer]:
    server = RawServer(list(replies))
    server.start()
    try:
        yield server
    finally:
        server.stop()

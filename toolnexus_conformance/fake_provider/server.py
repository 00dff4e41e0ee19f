"""HTTP plumbing of the fake provider: a stdlib ``ThreadingHTTPServer`` on 127.0.0.1 in a
daemon thread, speaking HTTP/1.1. It turns each request into an ``IncomingRequest``, asks
a router for a ``Reply`` and writes it: JSON with Content-Length, or SSE in chunked transfer
encoding flushed event by event (one chunk per event or scripted piece), both on a
connection kept alive as OpenAI's and Anthropic's servers keep it (an HTTP/1.0 client gets
its stream delimited by the connection closing instead).

It knows nothing about providers, sessions or scripts; ``sessions.py`` is the router.

Latency: the stdlib handler writes headers and body in separate sends. Without
TCP_NODELAY, Nagle's algorithm holds the body back until the client ACKs the headers,
and the client delays that ACK, so every request would wait for the delayed ACK. With
``nodelay=True`` (the default) accepted sockets get TCP_NODELAY and the response is
buffered so headers and body leave in one send. ``nodelay=False`` exists only so
``benchmarks/fake_provider_latency.py`` can show the difference."""

from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .request_head import HeadTooLarge, Refusal, parse_fields, read_field_lines, request_line

LOOPBACK = "127.0.0.1"
# An idle keep-alive connection is dropped after this long so no handler thread lingers.
IDLE_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class IncomingRequest:
    method: str
    path: str  # without the query string
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass(frozen=True)
class Reply:
    """A response to write: JSON ``body`` when ``events`` is None, else an SSE stream of
    already framed events (each ends with a blank line), or of arbitrary byte pieces of one
    (a scripted split), each flushed alone and followed by ``pause_s`` of quiet."""

    status: int
    body: bytes = b""
    events: tuple[bytes, ...] | None = None
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    pause_s: float = 0.0

    @property
    def wire_bytes(self) -> bytes:
        """The response body exactly as written."""
        return self.body if self.events is None else b"".join(self.events)

    @classmethod
    def json(
        cls, status: int, payload: Any, headers: tuple[tuple[str, str], ...] = ()
    ) -> Reply:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        return cls(status=status, body=body, headers=headers)

    @classmethod
    def sse(cls, events: tuple[bytes, ...]) -> Reply:
        return cls(status=200, events=events, content_type="text/event-stream")


Router = Callable[[IncomingRequest], Reply]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _LoopbackServer
    timeout = IDLE_TIMEOUT_SECONDS
    _date: tuple[int, str] = (-1, "")  # the last Date header, and the second it is for

    def setup(self) -> None:
        super().setup()
        self.server.track(self.request)

    def finish(self) -> None:
        self.server.untrack(self.request)
        try:
            super().finish()
        except OSError:
            pass  # the client went away; nothing left to flush to

    def parse_request(self) -> bool:
        # What the stdlib's parse_request does, with the header fields read by request_head
        # (the stdlib's email-based reader was the largest cost of a provider request).
        self.command = None  # type: ignore[assignment]  # as the stdlib: no command until read
        self.request_version = self.default_request_version
        self.close_connection = True
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")  # type: ignore[attr-defined]
        line = request_line(self.requestline)
        if isinstance(line, Refusal):
            if line.status:
                self.send_error(line.status, line.message)
            return False
        self.command, self.path, self.request_version = line.method, line.target, line.version
        self.close_connection = line.version_info < (1, 1)
        try:
            self.headers = parse_fields(read_field_lines(self.rfile))  # type: ignore[assignment]
        except HeadTooLarge as exc:
            self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, exc.reason, exc.detail)
            return False
        connection = (self.headers.get("Connection") or "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive":
            self.close_connection = False
        if (self.headers.get("Expect") or "").lower() == "100-continue" and line.version_info >= (1, 1):
            return self.handle_expect_100()
        return True

    def handle_expect_100(self) -> bool:
        accepted = super().handle_expect_100()
        # the buffered writer would hold "100 Continue" back while we wait for the body
        self.wfile.flush()
        return accepted

    def log_message(self, format: str, *args: Any) -> None:
        pass  # requests are recorded by the router; stderr noise helps nobody

    def date_time_string(self, timestamp: float | None = None) -> str:
        # The Date header changes once a second: format it once a second, not per request.
        if timestamp is not None:
            return super().date_time_string(timestamp)
        second = int(time.time())
        cached = _Handler._date
        if cached[0] != second:
            cached = _Handler._date = (second, super().date_time_string(second))
        return cached[1]

    def _handle(self) -> None:
        try:
            body = self._read_body()
        except ValueError as exc:
            self._write(Reply.json(400, {"error": {"message": str(exc)}}))
            self.close_connection = True
            return
        path = self.path.split("?", 1)[0]
        incoming = IncomingRequest(
            method=self.command,
            path=path,
            headers=tuple(self.headers.items()),
            body=body,
        )
        try:
            reply = self.server.router(incoming)
        except Exception as exc:  # never leave a client hanging on a harness bug
            self.server.internal_errors.append(
                f"{self.command} {path}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}"
            )
            reply = Reply.json(
                500, {"error": {"message": f"fake provider internal error: {exc}"}}
            )
        self._write(reply)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            return b""
        try:
            length = int(length_text)
        except ValueError:
            raise ValueError(f"bad Content-Length {length_text!r}") from None
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            size_line = self.rfile.readline(1024).split(b";", 1)[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                raise ValueError(f"bad chunk size {size_line!r}") from None
            if size == 0:
                # trailers end with an empty line
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            parts.append(self.rfile.read(size))
            self.rfile.readline(1024)  # the CRLF after each chunk

    def _write(self, reply: Reply) -> None:
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            for name, value in reply.headers:
                self.send_header(name, value)
            if reply.events is None:
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(reply.body)
                self.wfile.flush()
                return
            self.send_header("Cache-Control", "no-cache")
            chunked = self.request_version != "HTTP/1.0"
            if chunked:
                # as the providers serve a stream: chunked on a connection kept alive, so a
                # client's next request may reuse it
                self.send_header("Transfer-Encoding", "chunked")
            else:
                # HTTP/1.0 has no chunked framing: the stream's end is the connection closing
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.flush()
            send = self.connection.sendall  # one send per event (or split piece), a chunk each
            for event in reply.events:
                if not event:
                    continue  # an empty chunk would end the body
                send(b"%x\r\n%b\r\n" % (len(event), event) if chunked else event)
                if reply.pause_s:
                    # quiet on the line, so the client's read ends at this boundary
                    time.sleep(reply.pause_s)
            if chunked:
                send(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True


class _NoDelayHandler(_Handler):
    # a buffered writer: headers and body go out together on flush, in one segment
    wbufsize = -1

    def setup(self) -> None:
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().setup()


class _LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True
    # the stdlib default backlog of 5 makes a burst of parallel connects wait ~1 s for a
    # SYN retry; ports open several connections at once for concurrent tool turns
    request_queue_size = 128

    def __init__(self, router: Router, nodelay: bool, internal_errors: list[str]) -> None:
        self.router = router
        self.nodelay = nodelay
        self.internal_errors = internal_errors
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__((LOOPBACK, 0), _NoDelayHandler if nodelay else _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that drops a kept-alive connection (a reset while the handler waits for its
        # next request) is no error; anything else still gets the stdlib's report.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup for server_name; skip it
        socketserver.TCPServer.server_bind(self)
        self.server_name = LOOPBACK
        self.server_port = self.server_address[1]

    def track(self, conn: socket.socket) -> None:
        with self._connections_lock:
            self._connections.add(conn)

    def untrack(self, conn: socket.socket) -> None:
        with self._connections_lock:
            self._connections.discard(conn)

    def drop_connections(self) -> None:
        with self._connections_lock:
            conns = list(self._connections)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@dataclass
class LoopbackHttpServer:
    """Runs a router behind HTTP on 127.0.0.1 (an OS-chosen port) in a daemon thread."""

    router: Router
    nodelay: bool = True
    # harness bugs the router raised (the client got a 500); kept after stop()
    internal_errors: list[str] = field(default_factory=list, init=False)
    _server: _LoopbackServer | None = field(default=None, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    def start(self) -> None:
        if self._server is not None:
            return
        server = _LoopbackServer(self.router, self.nodelay, self.internal_errors)
        host = str(server.server_address[0])
        if host != LOOPBACK:
            server.server_close()
            raise RuntimeError(f"fake provider bound to {host}, expected {LOOPBACK} only")
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-provider:{self.port}",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        server.shutdown()
        server.drop_connections()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._server = self._thread = None

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def host(self) -> str:
        return str(self._require().server_address[0])

    @property
    def port(self) -> int:
        return int(self._require().server_address[1])

    def _require(self) -> _LoopbackServer:
        if self._server is None:
            raise RuntimeError("fake provider is not running")
        return self._server

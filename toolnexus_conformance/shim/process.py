"""One shim subprocess and the JSON-RPC message pump over its stdio.

:class:`ShimProcess` owns the process lifecycle (spawn, shutdown, terminate/kill, reap,
restart) and its threads: a stdout reader that parses bounded lines and routes responses
to waiting callers by id, a stdin writer (:mod:`toolnexus_conformance.shim.stdin`) so no thread ever
blocks on a shim that stopped reading, a stderr drain that keeps a bounded tail, an exit
waiter that notices the shim's exit at once even while a descendant holds its pipes, and a
small pool that runs the caller's host handlers (``host.waitFor`` and friends) so several
can be outstanding and any of them may block (the methods a handler answers at once are
answered on the reader). Every call has one deadline covering both
writing the request and reading the answer. The handshake lives in
:mod:`toolnexus_conformance.shim.session`; ending the shim's descendants in :mod:`toolnexus_conformance.shim.process_tree`.
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import InvalidStateError, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import IO, Any

from toolnexus_conformance.helpers.errors import (
    OutgoingMessageTooLarge,
    ProtocolError,
    ShimCallError,
    ShimCrashed,
    ShimError,
    ShimNotRunning,
    ShimProtocolError,
    ShimStartError,
    ShimTimeout,
)
from toolnexus_conformance.helpers.jsonrpc import (
    MAX_MESSAGE_BYTES,
    ErrorCode,
    ErrorObject,
    Message,
    MessageTooLarge,
    Notification,
    Params,
    Request,
    Response,
    describe,
    excerpt,
    parse_message,
)
from toolnexus_conformance.shim.callbacks import HostHandler, PendingCall, answer_callback, answers_at_once
from toolnexus_conformance.shim.child import ShimChild, exit_status
from toolnexus_conformance.shim.launch import Launcher, PlainLauncher
from toolnexus_conformance.shim.stdin import StdinWriter
from toolnexus_conformance.shim.streams import Redactor, StderrTail, Transcript

Validator = Callable[[str, str, dict[str, Any]], None]
"""(direction "out"/"in", method, message object); raises to reject the message."""

CANCEL_METHOD = "$/cancel"
EXIT_GRACE_SECONDS = 2.0  # how long to wait for exit/stderr EOF once stdout closed
# Once the shim exited and its descendants were ended, how long the reader may take to
# drain what is left in the stdout pipe before the exit is reported without it.
DRAIN_AFTER_EXIT_SECONDS = 0.5


class ShimProcess:
    """A shim subprocess speaking JSON-RPC 2.0 over NDJSON on stdin/stdout."""

    def __init__(
        self,
        *,
        validator: Validator | None = None,
        max_line_bytes: int = MAX_MESSAGE_BYTES,
        stderr_tail_bytes: int = 64 * 1024,
        handler_threads: int = 16,
        keep_transcript: bool = True,
    ) -> None:
        self.validator = validator
        self.max_line_bytes = max_line_bytes
        self.handler_threads = handler_threads
        self.redactor = Redactor()
        self.transcript = Transcript(self.redactor, keep=keep_transcript)
        self._stderr_limit = stderr_tail_bytes
        self._stderr = StderrTail(stderr_tail_bytes, self.redactor)
        self._argv: list[str] = []
        self._cwd: str | None = None
        self._env: Mapping[str, str] | None = None
        self._child: ShimChild | None = None
        self._lock = threading.Lock()
        self._stdin: StdinWriter | None = None
        # Set once the exit is someone else's to report: the reader saw EOF, or the harness
        # is stopping the shim itself. Until then the exit waiter may report it.
        self._exit_owned = threading.Event()
        self._ids = itertools.count(1)
        self._pending: dict[int, PendingCall] = {}
        self._fatal: ShimError | None = None  # set once the process is unusable
        self._fatal_delivered = False
        self._closing = False
        self._threads: list[threading.Thread] = []
        self._pool: ThreadPoolExecutor | None = None

    # ----------------------------------------------------------------- lifecycle

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        spawned: ShimChild | None = None,
        launcher: Launcher | None = None,
    ) -> None:
        """Start the shim through ``launcher`` (a plain subprocess by default); ``spawned``
        is a process of this same command started ahead of time (still running, never
        spoken to), taken over instead of starting one now."""
        if self._child is not None:
            raise ShimStartError("shim process already started; use restart()", **self._context())
        self._argv, self._cwd, self._env = list(argv), cwd, env
        # A fresh tail per process: a straggler drain thread of the old one cannot pollute it.
        self._stderr = StderrTail(self._stderr_limit, self.redactor)
        try:
            self._child = child = spawned or (launcher or PlainLauncher()).spawn(self._argv, cwd=cwd, env=env)
        except (OSError, ValueError) as exc:
            raise ShimStartError(f"could not start the shim: {exc}", **self._context()) from None
        self._fatal, self._fatal_delivered, self._closing = None, False, False
        self._ids = itertools.count(1)
        self._exit_owned = threading.Event()
        self._pool = ThreadPoolExecutor(self.handler_threads, thread_name_prefix="shim-host")
        self.transcript.event(f"started pid {child.pid}: {' '.join(self._argv)}")
        proc = child.proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._stdin = StdinWriter(proc.stdin)
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(proc.stdout,), name="shim-stdout", daemon=True),
            threading.Thread(target=self._stderr.drain, args=(proc.stderr,), name="shim-stderr", daemon=True),
            threading.Thread(target=self._watch_exit, args=(child,), name="shim-exit", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def restart(self) -> None:
        if not self._argv:
            raise ShimStartError("restart() before start()", **self._context())
        self.close()
        self.start(self._argv, cwd=self._cwd, env=self._env)

    def close(self, *, shutdown_timeout: float = 1.0) -> None:
        """Ask the shim to shut down, then terminate/kill it; always reaps the process."""
        child = self._child
        if child is None:
            return
        self._closing = True
        if self.usable:
            with contextlib.suppress(ShimError):  # the kill below is the real guarantee
                self.call("shutdown", None, timeout=shutdown_timeout)
        self._mark_fatal(ShimNotRunning("shim process was closed", **self._context()), delivered=True)
        self._stop(child, grace=shutdown_timeout)
        self._child = None

    def __enter__(self) -> ShimProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def command(self) -> list[str]:
        return list(self._argv)

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child else None

    @property
    def instance_token(self) -> str | None:
        """The token every process of this shim carries (see :mod:`toolnexus_conformance.shim.process_tree`)."""
        return self._child.token if self._child else None

    @property
    def usable(self) -> bool:
        """True while calls can be made: started, running, and no fatal error seen."""
        return self._child is not None and self._fatal is None and not self._child.exited()

    def stderr_tail(self) -> str:
        return self._stderr.text()

    # ----------------------------------------------------------------- calls

    def call(self, method: str, params: Params = None, *, timeout: float, handler: HostHandler | None = None) -> Any:
        """Send a request and wait for its response; returns ``result`` or raises a ShimError."""
        with self._lock:
            self._raise_if_unusable(method)
            pending = PendingCall(next(self._ids), method, handler)
            self._pending[pending.id] = pending
        try:
            # The request only joins the stdin queue; the one deadline below covers the shim
            # taking it off the pipe as well as answering it.
            self._send(Request(pending.id, method, params), method)
            try:
                response = pending.future.result(timeout)
            except FutureTimeout:
                raise self._timed_out(pending, timeout) from None
            except ShimError as exc:
                raise exc.during(method) from None
        finally:
            with self._lock:
                self._pending.pop(pending.id, None)
        pending.raise_problems(lambda: self._context(method))
        if response.error is not None:
            err = response.error
            message = self.redactor.scrub(err.message)
            raise ShimCallError(
                f"shim answered {method} with error {describe(err.code)}: {message}",
                code=err.code, message=message, data=self.redactor.scrub_json(err.data), **self._context(method),
            )
        return response.result

    def notify(self, method: str, params: Params = None) -> None:
        with self._lock:
            self._raise_if_unusable(method)
        self._send(Notification(method, params), method)

    def _raise_if_unusable(self, method: str) -> None:
        if self._child is None:
            raise ShimNotRunning(f"cannot call {method}: the shim is not started", **self._context(method))
        if self._fatal is not None:
            if not self._fatal_delivered:
                # The problem happened between calls; the next caller is the one to hear it.
                self._fatal_delivered = True
                raise self._fatal.during(f"idle; noticed when calling {method}")
            raise ShimNotRunning(
                f"cannot call {method}: the shim is unusable ({self._fatal.summary}); restart it",
                **self._context(method),
            )

    def _send(self, message: Message, method: str) -> None:
        """Validate, frame and queue one message for the shim's stdin; never blocks.

        Raises :class:`OutgoingMessageTooLarge` (nothing is sent) when the line would be over
        the protocol's limit: the shim could not read it, and it is the scenario's data."""
        obj = message.to_json()
        self.redactor.learn(obj)
        try:  # first: a 50 MB prompt is refused before it is validated
            line = message.to_line(self.max_line_bytes)
        except MessageTooLarge as exc:
            raise OutgoingMessageTooLarge(
                f"the harness refused to send {method} to the shim: {exc} of the shim protocol (SPEC §6). "
                "The message is built from the scenario's data (prompt, toolkit, history, answers): "
                "make the scenario smaller; the shim was not involved and stays usable",
                method=method, size=exc.size, limit=exc.limit,
            ) from None
        if self.validator is not None:
            self.validator("out", method, obj)
        stdin = self._stdin
        if stdin is None:
            return
        with self._lock:  # queue order is transcript order
            self.transcript.record("out", line)
            stdin.put(line)

    def _timed_out(self, pending: PendingCall, timeout: float) -> ShimError:
        backlog = self._stdin.backlog() if self._stdin is not None else None
        with contextlib.suppress(Exception):  # a failing validator must not mask the timeout
            self._send(Notification(CANCEL_METHOD, {"id": pending.id}), CANCEL_METHOD)
        if backlog is not None and backlog.pending_bytes:
            what = (f"shim stopped reading its stdin: {backlog.pending_bytes} bytes for it were still unwritten "
                    f"after {timeout:g} s (none taken for {backlog.stalled_s:.1f} s; its stdin pipe is full) "
                    f"during {pending.method}; killed it")
        else:
            what = f"shim did not answer {pending.method} within {timeout:g} s; sent {CANCEL_METHOD} and killed it"
        error = ShimTimeout(what, timeout=timeout, **self._context(pending.method))
        if not self._mark_fatal(error, delivered=True):
            # Another failure (crash, protocol error) won the race; report that one instead.
            exc = pending.future.exception(timeout=0) if pending.future.done() else None
            return exc if isinstance(exc, ShimError) else error
        if self._child is not None:
            self._stop(self._child, grace=0.0)
        error.stderr_tail = self._stderr.text()  # the kill may have flushed more (e.g. a dump)
        return error

    # ----------------------------------------------------------------- stdout pump

    def _read_stdout(self, stdout: IO[bytes]) -> None:
        limit = self.max_line_bytes + 1  # +1 for the newline
        while True:
            try:
                line = stdout.readline(limit)
            except (OSError, ValueError):
                line = b""
            if not line:
                self._on_eof()
                return
            if len(line) == limit and not line.endswith(b"\n"):
                self.transcript.record("in", line[:200] + b"...<oversized line cut>")
                self._protocol_violation(
                    f"shim wrote a line longer than the {self.max_line_bytes} byte limit, starting {excerpt(line[:80])}"
                )
                return
            self.transcript.record("in", line)
            try:
                message = parse_message(line)
                self._dispatch(message)
            except (ProtocolError, ShimProtocolError) as exc:
                self._protocol_violation(str(exc) if isinstance(exc, ProtocolError) else exc.summary)
                return
            except Exception as exc:  # noqa: BLE001 - never leave callers waiting on a dead reader
                self._protocol_violation(f"(harness error while handling the line: {exc!r})")
                return

    def _dispatch(self, message: Message) -> None:
        if isinstance(message, Response):
            with self._lock:
                pending = self._pending.get(message.id) if isinstance(message.id, int) else None
            if message.id is None and message.error is not None:
                raise ShimProtocolError(
                    f"shim could not read a harness message: {describe(message.error.code)}: {message.error.message}"
                )
            if pending is None or pending.future.done():
                raise ShimProtocolError(f"shim sent a response with an unknown id {message.id!r}")
            self._validate_in(pending.method, message)
            with contextlib.suppress(InvalidStateError):  # a timeout may have failed it meanwhile
                pending.future.set_result(message)
        elif isinstance(message, Request):
            self._validate_in(message.method, message)
            self._start_host_request(message)
        else:
            self._validate_in(message.method, message)
            self.transcript.event(f"ignored notification {message.method}")

    def _validate_in(self, method: str, message: Message) -> None:
        if self.validator is None:
            return
        try:
            self.validator("in", method, message.to_json())
        except Exception as exc:  # noqa: BLE001 - any validator complaint is a protocol fault
            raise ShimProtocolError(f"shim message for {method} failed validation: {exc}") from None

    def _start_host_request(self, request: Request) -> None:
        with self._lock:
            owner = next((p for p in self._pending.values() if p.handler is not None), None)
        if owner is None or self._pool is None:
            error = ErrorObject(ErrorCode.METHOD_NOT_FOUND, f"no host handler is active for {request.method}")
            self._send(Response(request.id, error=error), request.method)  # queued: never blocks the reader
            return
        if request.method in answers_at_once(owner.handler):  # never waits: answered here
            answer_callback(owner, request, self._send, listening=lambda: self._fatal is None)
            return
        self._pool.submit(answer_callback, owner, request, self._send, listening=lambda: self._fatal is None)

    # ----------------------------------------------------------------- failures

    def _protocol_violation(self, reason: str) -> None:
        """The stream cannot be trusted after a bad line: fail every call and kill the shim."""
        # Kill and reap first, so the caller wakes to a reaped process and a complete stderr tail.
        if self._fatal is None and self._child is not None:
            self._stop(self._child, grace=0.0)
        self._mark_fatal(ShimProtocolError(f"shim broke the protocol: {reason}", **self._context()))

    def _on_eof(self) -> None:
        self._exit_owned.set()
        child = self._child
        if child is None or self._fatal is not None:
            self._fail_pending(self._fatal)
            return
        if self._closing:
            self._mark_fatal(ShimNotRunning("shim process was closed", **self._context()))
            return
        self._report_exit(child, exited=child.exited(EXIT_GRACE_SECONDS))

    def _watch_exit(self, child: ShimChild) -> None:
        """Notice the shim's exit at once, not when its stdout closes: a descendant that
        inherited the pipe may hold it open for as long as it lives."""
        child.wait_for_exit()
        if self._exit_owned.is_set():
            return  # the harness is stopping it: _stop ends the tree and reaps
        # Whatever the shim started ends with it, which also closes the pipes they hold.
        child.end_tree(signal.SIGKILL)
        if self._exit_owned.wait(DRAIN_AFTER_EXIT_SECONDS) or self._closing or child is not self._child:
            return  # the reader reports the exit, after the shim's last lines
        self._report_exit(child, exited=True, note=" (something it started still held its stdout)")

    def _report_exit(self, child: ShimChild, *, exited: bool, note: str = "") -> None:
        child.end_tree(signal.SIGKILL)  # a hung leader, or descendants that outlive it
        returncode = child.reap()
        status = exit_status(returncode) + note if exited else "closed its stdout while still running (killed)"
        self._stderr.wait_for_eof(EXIT_GRACE_SECONDS)  # the crash reason is usually the last stderr
        self._mark_fatal(ShimCrashed(f"shim {status}", returncode=returncode if exited else None, **self._context()))

    def _mark_fatal(self, error: ShimError, *, delivered: bool = False) -> bool:
        """Record the first fatal error and fail every waiting call with it; False if one was already set."""
        with self._lock:
            if self._fatal is not None:
                return False
            self._fatal = error
            pending = list(self._pending.values())
            # Only a failure nobody waited for needs to be raised by the next call.
            self._fatal_delivered = delivered or bool(pending)
        self.transcript.event(error.summary)
        self._fail_pending(error, pending)
        return True

    def _fail_pending(self, error: ShimError | None, pending: list[PendingCall] | None = None) -> None:
        with self._lock:
            calls = list(self._pending.values()) if pending is None else pending
        for call in calls:
            with contextlib.suppress(InvalidStateError):  # it may complete concurrently
                call.future.set_exception(error or ShimNotRunning("shim stopped", **self._context()))

    def _stop(self, child: ShimChild, *, grace: float) -> None:
        """Close stdin, wait ``grace``, then end the shim and every descendant; always reap."""
        self._exit_owned.set()  # the harness is ending the process: its exit is no news
        if self._stdin is not None:
            self._stdin.close()
        child.terminate(grace)
        self._stderr.wait_for_eof(1.0)
        current = threading.current_thread()
        for thread in self._threads:
            if thread is not current:
                thread.join(1.0)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        for thread, stream in zip(self._threads, (child.proc.stdout, child.proc.stderr), strict=False):
            if stream is not None and (thread is current or not thread.is_alive()):
                stream.close()

    def _context(self, method: str | None = None) -> dict[str, Any]:
        return {"command": self._argv, "cwd": self._cwd, "stderr_tail": self._stderr.text(), "method": method}

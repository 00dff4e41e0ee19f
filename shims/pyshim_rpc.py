"""The stdio JSON-RPC plumbing both Python shims share (shims/reference, shims/python).

Owns what does not depend on the port a shim drives: the protocol's error codes, the
line-delimited channel (our responses, and our own ``host.*`` requests matched to their
answers by id), the read loop (parse, route answers, ``shutdown``, ``$/cancel``), one
request's dispatch with the protocol's error mapping, the host-backed conversation store,
and the scenario's native-tool behaviour vocabulary. Each shim keeps the translation
between the protocol and its port.

Standard library only: the python port's shim runs in a venv that holds nothing but the
port, so this module may import neither the harness nor ``reference_py``. A shim imports
it after putting its parent folder (``shims/``) on ``sys.path``.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

PROTOCOL_VERSION = 1
READ_CHUNK = 1 << 16  # bytes read off stdin at once
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
PORT_ERROR, UNSUPPORTED, VERSION_MISMATCH = -32001, -32002, -32003

Message = dict[str, Any]
Handler = Callable[[dict[str, Any]], Awaitable[Any]]
# The port-error kind ("toolkit", "resume", "provider", "run") of an exception the port
# raised, or None when the exception is a bug of the shim itself.
ErrorKind = Callable[[Exception], str | None]


class RpcError(Exception):
    """An error answer to the harness's request: the protocol's code, message and data."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class HostError(Exception):
    """The harness answered one of our host.* requests with an error (e.g. a waitFor that
    raises). Inside the port this is the host's own callback failing, so the run's outcome
    is the port's: reported as a port error of kind "run", never passed through as a
    protocol error."""


def port_error(message: str, kind: str) -> RpcError:
    return RpcError(PORT_ERROR, message, {"kind": kind})


def require_protocol(params: dict[str, Any]) -> None:
    """Refuse an ``initialize`` that asks for a protocol version other than ours."""
    if params.get("protocolVersion") != PROTOCOL_VERSION:
        supported = {"supported": [PROTOCOL_VERSION]}
        raise RpcError(VERSION_MISMATCH, f"this shim speaks protocol {PROTOCOL_VERSION}", supported)


def encode_message(message: Message) -> bytes:
    """One compact line's JSON (no newline)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def decode_line(line: bytes | str) -> Any:
    """One line's JSON value."""
    return json.loads(line)


class Channel:
    """Line-delimited JSON-RPC on stdout, and the answers to our own requests by id.

    ``id_prefix`` keeps our request ids apart from the harness's; ``name`` labels the
    shim's diagnostics on stderr."""

    def __init__(self, id_prefix: str, name: str) -> None:
        self.name = name
        self._id_prefix = id_prefix
        self._ids = 0
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        # Responses may be written from any task; one line must never interleave another.
        self._write_lock = threading.Lock()

    def send(self, message: Message) -> None:
        line = encode_message(message) + b"\n"
        with self._write_lock:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Ask the harness (``host.*``) and wait for its answer; an error answer raises HostError."""
        self._ids += 1
        rid = f"{self._id_prefix}{self._ids}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = future
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return await future

    def resolve(self, message: Message) -> None:
        """Hand an answer from the harness to the request waiting for it."""
        future = self._waiting.pop(str(message.get("id")), None)
        if future is None or future.done():
            print(f"{self.name}: response to unknown id {message.get('id')!r}", file=sys.stderr)
        elif "error" in message:
            error = message["error"] or {}
            future.set_exception(HostError(f"host error {error.get('code')}: {error.get('message', '')}"))
        else:
            future.set_result(message.get("result"))


async def dispatch(channel: Channel, handlers: dict[str, Handler], message: Message, kind_of: ErrorKind) -> None:
    """Answer one request from the harness with its handler's result or a protocol error."""
    rid, method = message.get("id"), message["method"]
    handler = handlers.get(method)
    try:
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
        result = await handler(message.get("params") or {})
    except RpcError as exc:
        error = exc.to_wire()
    except HostError as exc:
        error = port_error(f"host callback failed: {exc}", "run").to_wire()
    except Exception as exc:
        kind = kind_of(exc)
        if kind is None:  # a bug of the shim: report it, keep serving
            traceback.print_exc(file=sys.stderr)
            error = {"code": INTERNAL_ERROR, "message": repr(exc)}
        else:  # the port refused or failed: its own message, classified
            print(f"{channel.name}: port error ({kind}): {exc!r}", file=sys.stderr)
            error = port_error(str(exc) or repr(exc), kind).to_wire()
    else:
        channel.send({"jsonrpc": "2.0", "id": rid, "result": result})
        return
    channel.send({"jsonrpc": "2.0", "id": rid, "error": error})


async def serve(channel: Channel, handle: Callable[[Message], Coroutine[Any, Any, None]]) -> None:
    """Read requests from stdin until ``shutdown`` or EOF; each request runs as its own task
    through ``handle`` (so host answers and ``$/cancel`` arrive while it runs). Each line is
    handled the moment it is read, by the callback that read it: an answer wakes the call
    waiting for it, a request starts its task, with no queue and loop pass in between."""
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()
    running: dict[Any, asyncio.Task[None]] = {}

    def forget(task: asyncio.Task[None]) -> None:
        for rid, known in list(running.items()):
            if known is task:
                del running[rid]

    def on_line(line: bytes | str | None) -> None:
        if ended.done():  # after shutdown (or a failure), nothing more is read
            return
        try:
            if line is None:
                ended.set_result(None)
            elif _handle_line(channel, handle, running, line, forget):
                ended.set_result(None)
        except BaseException as exc:  # as the read loop would: it ends serve() with the error
            ended.set_exception(exc)

    stop_reading = feed_lines(loop, on_line)
    try:
        await ended
    finally:
        stop_reading()


def _handle_line(channel: Channel, handle: Callable[[Message], Coroutine[Any, Any, None]],
                 running: dict[Any, asyncio.Task[None]], line: bytes | str,
                 forget: Callable[[asyncio.Task[None]], None]) -> bool:
    """One line from the harness; True once it was ``shutdown`` (answered)."""
    if not line.strip():
        return False
    try:
        message = decode_line(line)
    except ValueError:  # not JSON, or not UTF-8
        channel.send({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "parse error"}})
        return False
    if not isinstance(message, dict):
        error = {"code": INVALID_REQUEST, "message": "invalid request"}
        channel.send({"jsonrpc": "2.0", "id": None, "error": error})
    elif "method" not in message:
        channel.resolve(message)
    elif message["method"] == "shutdown":
        channel.send({"jsonrpc": "2.0", "id": message.get("id"), "result": {}})
        return True
    elif message["method"] == "$/cancel":
        task = running.pop((message.get("params") or {}).get("id"), None)
        if task is not None:
            task.cancel()
    else:
        task = asyncio.create_task(handle(message))
        running[message.get("id")] = task
        task.add_done_callback(forget)
    return False


def feed_lines(loop: asyncio.AbstractEventLoop, on_line: Callable[[bytes | str | None], None]) -> Callable[[], None]:
    """Hand stdin's lines to ``on_line`` on the loop as they arrive (so host answers arrive
    mid-run), then None at EOF; returns what stops the reading. A pipe is read by the loop
    itself: a reader thread would cost each line a thread switch and a wake-up of the loop,
    a few tens of microseconds of CPU on every message. Anything else (a terminal, a file,
    a ``sys.stdin`` replaced by a test's wrapper) is iterated on a thread, as a blocking stream."""
    fd = stdin_pipe()
    if fd is None:

        def pump() -> None:
            for line in sys.stdin:
                loop.call_soon_threadsafe(on_line, line)
            loop.call_soon_threadsafe(on_line, None)

        threading.Thread(target=pump, daemon=True).start()
        return lambda: None
    os.set_blocking(fd, False)  # this pipe's read end is the shim's alone
    pending = bytearray()

    def readable() -> None:
        try:
            data = os.read(fd, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        if not data:
            loop.remove_reader(fd)
            if pending:
                on_line(bytes(pending))
            on_line(None)
            return
        pending.extend(data)
        end = pending.rfind(b"\n")
        if end < 0:
            return
        complete = bytes(pending[: end + 1])
        del pending[: end + 1]
        for line in complete.splitlines():
            on_line(line)

    loop.add_reader(fd, readable)
    return lambda: loop.remove_reader(fd)


def stdin_pipe() -> int | None:
    """The descriptor of stdin when it is the process's own stdin and a pipe, else None."""
    if sys.stdin is None or sys.stdin is not sys.__stdin__:
        return None
    try:
        fd = sys.stdin.fileno()
        return fd if stat.S_ISFIFO(os.fstat(fd).st_mode) else None
    except (OSError, ValueError):
        return None


class HostStore:
    """A port's conversation store, kept by the harness (``host.store.*``) so transcripts
    survive a shim restart."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel

    async def get(self, id: str) -> list[Any] | None:  # noqa: A002 - the ports' parameter name
        reply = await self._channel.request("host.store.get", {"id": id})
        return (reply or {}).get("messages")

    async def save(self, id: str, messages: list[Any]) -> None:  # noqa: A002
        await self._channel.request("host.store.save", {"id": id, "messages": messages})


def no_arguments_schema() -> dict[str, Any]:
    """The input schema of a scenario tool declared without one (a fresh dict each time)."""
    return {"type": "object", "properties": {}, "additionalProperties": False}


def execution(tool: str, call_id: str | None, args: Any, answered: bool) -> dict[str, Any]:
    """One entry of ``client.run``'s ``executions``: a native tool started."""
    return {"tool": tool, "callId": call_id, "args": args, "answered": answered}


# How long a stream's waitFor waits for the consumer to receive the pending event of its
# Request before telling the host it did not (SPEC.md §6, host.waitFor pendingEventSeen).
SIGHTING_WAIT = 1.0


class PendingSightings:
    """The pending events a stream's consumer has received, by Request id, so a waitFor can
    tell the host whether the link reached the consumer while it waits (stream.pending-event)."""

    def __init__(self) -> None:
        self._seen: dict[str, asyncio.Event] = {}

    def _flag(self, request_id: str) -> asyncio.Event:
        return self._seen.setdefault(request_id, asyncio.Event())

    def saw(self, event: dict[str, Any]) -> None:
        """Note one event the consumer received (its wire form)."""
        request_id = (event.get("request") or {}).get("id") if event.get("type") == "pending" else None
        if isinstance(request_id, str):
            self._flag(request_id).set()

    async def seen(self, request_id: str) -> bool:
        """Whether the consumer has received, or receives within SIGHTING_WAIT, that pending event."""
        try:
            await asyncio.wait_for(self._flag(request_id).wait(), SIGHTING_WAIT)
        except TimeoutError:
            return False
        return True


@dataclass(frozen=True)
class Outcome:
    """What a scripted native tool does: return ``output`` (an error if ``is_error``), or
    suspend with the Request ``suspend`` (its wire form) when that is set."""

    output: str = ""
    is_error: bool = False
    suspend: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None  # a reply's or failure's own metadata, as scripted


async def perform(behaviour: dict[str, Any], answer: Any | None) -> Outcome:
    """Play a scenario tool's behaviour (reply, fail, metadata, delayMs, suspend+then, alwaysSuspend).
    ``answer`` is the port's Answer this execution resumes with (anything with ``.data``),
    or None on a first execution."""
    if behaviour.get("delayMs"):
        await asyncio.sleep(behaviour["delayMs"] / 1000)
    if "reply" in behaviour:
        return Outcome(behaviour["reply"], metadata=behaviour.get("metadata"))
    if "fail" in behaviour:
        return Outcome(behaviour["fail"], is_error=True, metadata=behaviour.get("metadata"))
    if "alwaysSuspend" in behaviour:
        return Outcome(suspend=behaviour["alwaysSuspend"])
    if answer is None:
        return Outcome(suspend=behaviour["suspend"])
    then = behaviour["then"]
    if "reply" in then:
        return Outcome(then["reply"])
    output = (answer.data or {}).get("output")
    return Outcome(output if isinstance(output, str) else "")

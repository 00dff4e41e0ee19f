"""JSON-RPC 2.0 messages as the shim protocol frames them: one compact UTF-8 JSON object
per line, terminated by ``\\n``.

This module owns the message dataclasses, their serialization (``to_line``), the strict
parser (:func:`parse_message`) and the error-code table. It knows nothing about
processes; :mod:`toolnexus_conformance.shim.process` moves these lines over a shim's stdio.

It is the bottom of the harness's import graph: it imports nothing from the harness but the
leaf :mod:`toolnexus_conformance.helpers.json_types` (which imports nothing itself), so
:mod:`toolnexus_conformance.helpers.errors` can build on its error codes without an import cycle. Its two
exceptions are plain ``ValueError``s about one line; the transport turns them into the
user-facing :class:`toolnexus_conformance.helpers.errors.ShimError` family.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from toolnexus_conformance.helpers import fast_json
from toolnexus_conformance.helpers.json_types import json_type_name, refuse_constant

JSONRPC_VERSION = "2.0"
MAX_MESSAGE_BYTES = 8 * 1024 * 1024
EXCERPT_CHARS = 120


class ProtocolError(ValueError):
    """One line on the wire is not a valid JSON-RPC 2.0 message (one-line message)."""


class MessageTooLarge(ValueError):
    """A message this side was asked to send would exceed the protocol's line limit."""

    def __init__(self, size: int, limit: int) -> None:
        self.size, self.limit = size, limit
        super().__init__(f"the encoded line would be {size} bytes, over the {limit} byte line limit")


Id = int | str
Params = dict[str, Any] | list[Any] | None


class ErrorCode(IntEnum):
    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    PORT_ERROR = -32001
    UNSUPPORTED_CAPABILITY = -32002
    PROTOCOL_VERSION_MISMATCH = -32003


_DESCRIPTIONS: dict[int, str] = {
    ErrorCode.PARSE_ERROR: "parse error: the receiver could not parse the line as JSON",
    ErrorCode.INVALID_REQUEST: "invalid request: not a valid JSON-RPC 2.0 request",
    ErrorCode.METHOD_NOT_FOUND: "method not found",
    ErrorCode.INVALID_PARAMS: "invalid params",
    ErrorCode.INTERNAL_ERROR: "internal error",
    ErrorCode.PORT_ERROR: "port error: the port itself refused or failed (see data.kind)",
    ErrorCode.UNSUPPORTED_CAPABILITY: "unsupported capability: the port lacks what the call needs",
    ErrorCode.PROTOCOL_VERSION_MISMATCH: "protocol version mismatch",
}


def describe(code: int) -> str:
    """A human-readable name for an error code, e.g. ``-32001 port error: …``."""
    if code in _DESCRIPTIONS:
        return f"{code} {_DESCRIPTIONS[code]}"
    if -32099 <= code <= -32000:
        return f"{code} implementation-defined server error"
    if -32768 <= code <= -32000:
        return f"{code} reserved JSON-RPC code (unassigned)"
    return f"{code} application-defined error"


@dataclass(frozen=True)
class ErrorObject:
    code: int
    message: str
    data: Any = None  # omitted on the wire when None

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            obj["data"] = self.data
        return obj


@dataclass(frozen=True)
class Request:
    id: Id
    method: str
    params: Params = None

    def to_json(self) -> dict[str, Any]:
        return _call_json(self.method, self.params, {"id": self.id})

    def to_line(self, limit: int | None = None) -> bytes:
        return encode_line(self.to_json(), limit)


@dataclass(frozen=True)
class Notification:
    method: str
    params: Params = None

    def to_json(self) -> dict[str, Any]:
        return _call_json(self.method, self.params, {})

    def to_line(self, limit: int | None = None) -> bytes:
        return encode_line(self.to_json(), limit)


def _call_json(method: str, params: Params, head: dict[str, Any]) -> dict[str, Any]:
    """A request's or notification's JSON object: ``head`` (the id, for a request) first."""
    obj: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, **head, "method": method}
    if params is not None:
        obj["params"] = params
    return obj


@dataclass(frozen=True)
class Response:
    """A success (``error is None``; ``result`` may legitimately be null) or an error."""

    id: Id | None
    result: Any = None
    error: ErrorObject | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "id": self.id}
        if self.error is not None:
            obj["error"] = self.error.to_json()
        else:
            obj["result"] = self.result
        return obj

    def to_line(self, limit: int | None = None) -> bytes:
        return encode_line(self.to_json(), limit)


Message = Request | Notification | Response


def is_port_error(error: ErrorObject | None) -> bool:
    """True when an error response is the port's own refusal rather than a protocol fault."""
    return error is not None and error.code == ErrorCode.PORT_ERROR


def encode_line(obj: dict[str, Any], limit: int | None = None) -> bytes:
    """One framed line; with ``limit``, raise :class:`MessageTooLarge` rather than return a
    line longer than ``limit`` bytes (newline excluded).

    The line is built in C before its size is known: an oversized message costs one copy of
    the order of the data already held before it is refused. Bounding the size first would
    mean walking every message in Python, which costs more than encoding it.
    """
    # Compact JSON cannot contain a raw newline (control characters are escaped), so one
    # dumps() per line is safe framing.
    data = fast_json.dumps(obj)
    if limit is not None and len(data) > limit:
        raise MessageTooLarge(len(data), limit)
    return data + b"\n"


def excerpt(line: bytes | str, limit: int = EXCERPT_CHARS) -> str:
    """A short, printable excerpt of a wire line for error messages."""
    text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    text = text.rstrip("\r\n")
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} chars)"


def parse_message(line: bytes) -> Message:
    """Parse one wire line into a message, or raise :class:`ProtocolError` saying why not."""

    def fail(reason: str) -> ProtocolError:
        return ProtocolError(f"{reason}: {excerpt(line)}")

    message = _canonical_message(line)
    if message is not None:
        return message

    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"line is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    if not text.strip():
        raise fail("empty line (each line must carry one JSON object)")
    try:
        obj = json.loads(text, object_pairs_hook=_reject_duplicate_keys, parse_constant=refuse_constant)
    except (json.JSONDecodeError, ValueError) as exc:
        raise fail(f"line is not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise fail(f"message is a JSON {json_type_name(obj)}, not an object")
    if "jsonrpc" not in obj:
        raise fail('message lacks "jsonrpc": "2.0"')
    if obj["jsonrpc"] != JSONRPC_VERSION:
        raise fail(f'"jsonrpc" must be "2.0", got {obj["jsonrpc"]!r}')
    try:
        return _message_from_object(obj)
    except _ShapeError as exc:
        raise fail(str(exc)) from None


def _canonical_message(line: bytes) -> Message | None:
    """The message on a line written as compactly as our own encoder writes it (the common
    case, parsed once in C), or None: every other line takes the checks that say what is
    wrong with it, or what an unusual but valid line holds."""
    obj = fast_json.canonical(line)
    if not isinstance(obj, dict) or obj.get("jsonrpc") != JSONRPC_VERSION:
        return None
    try:
        return _message_from_object(obj)
    except _ShapeError:
        return None


class _ShapeError(Exception):
    pass


_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_RESPONSE_KEYS = frozenset({"jsonrpc", "id", "result", "error"})


def _message_from_object(obj: dict[str, Any]) -> Message:
    if "method" in obj:
        _no_extra_keys(obj, _REQUEST_KEYS, "request")
        method = obj["method"]
        if not isinstance(method, str) or not method:
            raise _ShapeError(f'"method" must be a non-empty string, got {json_type_name(method)}')
        params = obj.get("params")
        if "params" in obj and not isinstance(params, (dict, list)):
            raise _ShapeError(f'"params" must be an object or array, got {json_type_name(params)}')
        if "id" not in obj:
            return Notification(method, params)
        request_id = _checked_id(obj["id"], allow_null=False)
        assert request_id is not None  # allow_null=False refuses a null id before returning
        return Request(request_id, method, params)

    _no_extra_keys(obj, _RESPONSE_KEYS, "response")
    if "id" not in obj:
        raise _ShapeError('message has neither "method" nor "id"')
    has_result, has_error = "result" in obj, "error" in obj
    if has_result == has_error:
        which = "both" if has_result else "neither"
        raise _ShapeError(f'response has {which} "result" and "error" (exactly one is required)')
    # JSON-RPC allows a null id only on an error answering a request whose id was unreadable.
    msg_id = _checked_id(obj["id"], allow_null=has_error)
    if has_result:
        return Response(msg_id, result=obj["result"])
    return Response(msg_id, error=_error_object(obj["error"]))


def _error_object(raw: Any) -> ErrorObject:
    if not isinstance(raw, dict):
        raise _ShapeError(f'"error" must be an object, got {json_type_name(raw)}')
    _no_extra_keys(raw, frozenset({"code", "message", "data"}), "error object")
    code, message = raw.get("code"), raw.get("message")
    if isinstance(code, bool) or not isinstance(code, int):
        raise _ShapeError(f'"error.code" must be an integer, got {json_type_name(code)}')
    if not isinstance(message, str):
        raise _ShapeError(f'"error.message" must be a string, got {json_type_name(message)}')
    return ErrorObject(code, message, raw.get("data"))


def _checked_id(value: Any, *, allow_null: bool) -> Id | None:
    if value is None and allow_null:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise _ShapeError(f'"id" must be an integer or a string, got {json_type_name(value)}')
    return value


def _no_extra_keys(obj: dict[str, Any], allowed: frozenset[str], what: str) -> None:
    extra = sorted(set(obj) - allowed)
    if extra:
        raise _ShapeError(f"{what} has unexpected member(s) {', '.join(map(repr, extra))}")


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)  # every object of every line comes through here: built in C first
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
    return obj



"""The contract's data types: Request, Answer, ToolResult, ToolContext, Tool, RunResult.

This module owns the §10 wire shapes and their (de)serialization. Wire keys are pinned
by the contract (camelCase ``expiresAt``, ``isError`` …) and optional keys are *omitted*
when absent, never written as ``null`` — ``to_wire()`` is what a host puts on the wire.
``from_wire()`` is strict: a malformed object raises :class:`WireError` with the JSON path
of the first problem instead of a deep traceback.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import WireError

RELAY_KIND = "tool_call"

Source = Literal["native", "builtin", "relay", "custom", "mcp"]
Status = Literal["done", "pending", "incomplete"]


def _require(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in obj:
        raise WireError(f"{where}: missing required key {key!r}")
    value = obj[key]
    # bool is an int subclass; never let True pass for a string/number field or vice versa.
    if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
        raise WireError(f"{where}.{key}: expected {_type_name(kind)}, got {_json_type(value)}")
    return value


def _optional(obj: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in obj:
        return None
    if obj[key] is None:
        raise WireError(f"{where}.{key}: optional keys are omitted when absent, never null")
    return _require(obj, key, kind, where)


def _wire_object(obj: Any, allowed: frozenset[str], where: str) -> Mapping[str, Any]:
    """``obj`` checked to be a JSON object that holds no key outside ``allowed``."""
    if not isinstance(obj, Mapping):
        raise WireError(f"{where}: expected an object, got {_json_type(obj)}")
    extra = sorted(set(obj) - allowed)
    if extra:
        raise WireError(f"{where}: unexpected key(s) {', '.join(map(repr, extra))}")
    return obj


def _with_present(wire: dict[str, Any], **optional: Any) -> dict[str, Any]:
    """``wire`` followed by each optional key that has a value: absent keys are omitted,
    never written as null."""
    wire.update((key, value) for key, value in optional.items() if value is not None)
    return wire


def _type_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "string", bool: "boolean", dict: "object", list: "array", int: "integer"}
    if isinstance(kind, tuple):
        return " or ".join(names.get(k, k.__name__) for k in kind)
    return names.get(kind, kind.__name__)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return _type_name(type(value))


@dataclass(frozen=True)
class Request:
    """What a suspended tool asks the host for (§10). ``kind == "tool_call"`` is relay."""

    id: str
    kind: str
    prompt: str
    url: str | None = None
    data: dict[str, Any] | None = None
    expiresAt: str | None = None  # noqa: N815 - mirrors the wire key, as the Python port does

    _KEYS = frozenset({"id", "kind", "prompt", "url", "data", "expiresAt"})

    def to_wire(self) -> dict[str, Any]:
        return _with_present(
            {"id": self.id, "kind": self.kind, "prompt": self.prompt},
            url=self.url,
            data=self.data,
            expiresAt=self.expiresAt,
        )

    @classmethod
    def from_wire(cls, obj: Any, where: str = "request") -> Request:
        obj = _wire_object(obj, cls._KEYS, where)
        return cls(
            id=_require(obj, "id", str, where),
            kind=_require(obj, "kind", str, where),
            prompt=_require(obj, "prompt", str, where),
            url=_optional(obj, "url", str, where),
            data=_optional(obj, "data", dict, where),
            expiresAt=_optional(obj, "expiresAt", str, where),
        )

    @property
    def is_relay(self) -> bool:
        return self.kind == RELAY_KIND


@dataclass(frozen=True)
class Answer:
    """The host's reply to a Request; ``id`` echoes ``Request.id``; the loop branches on ``ok``."""

    id: str
    ok: bool
    data: dict[str, Any] | None = None
    reason: str | None = None

    _KEYS = frozenset({"id", "ok", "data", "reason"})

    def to_wire(self) -> dict[str, Any]:
        return _with_present({"id": self.id, "ok": self.ok}, data=self.data, reason=self.reason)

    @classmethod
    def from_wire(cls, obj: Any, where: str = "answer") -> Answer:
        obj = _wire_object(obj, cls._KEYS, where)
        return cls(
            id=_require(obj, "id", str, where),
            ok=_require(obj, "ok", bool, where),
            data=_optional(obj, "data", dict, where),
            reason=_optional(obj, "reason", str, where),
        )


@dataclass
class ToolResult:
    """A tool's outcome. A result is a suspension iff ``metadata["pending"]`` is a Request."""

    output: str
    is_error: bool = False
    metadata: dict[str, Any] | None = None


_pending_seq = itertools.count(1)


def pending(
    *,
    kind: str,
    prompt: str,
    id: str | None = None,  # noqa: A002 - the Python port's keyword
    url: str | None = None,
    data: dict[str, Any] | None = None,
    expiresAt: str | None = None,  # noqa: N803
) -> ToolResult:
    """Build a suspension. A missing id is generated as ``pnd-<ms hex>-<seq>``."""
    request = Request(
        id=id if id is not None else f"pnd-{int(time.time() * 1000):x}-{next(_pending_seq)}",
        kind=kind,
        prompt=prompt,
        url=url,
        data=data,
        expiresAt=expiresAt,
    )
    output = prompt if url is None else f"{prompt}\n{url}"
    return ToolResult(output=output, is_error=True, metadata={"pending": request})


def pending_of(result: ToolResult | None) -> Request | None:
    """The Request a result suspends on, or None when it is an ordinary result."""
    if result is None or not result.metadata:
        return None
    candidate = result.metadata.get("pending")
    return candidate if isinstance(candidate, Request) else None


@dataclass(frozen=True)
class ToolContext:
    """What a tool's execute sees besides its arguments: the provider call id and, on the
    §10 retry, the host's Answer."""

    call_id: str
    tool_name: str
    answer: Answer | None = None
    # The call's arguments as a JSON string: the provider's raw OpenAI string byte for byte,
    # or a compact serialization (Anthropic input, or args a beforeTool hook rewrote).
    raw_arguments: str | None = None
    turn: int = 0


Execute = Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]


@dataclass(frozen=True)
class Tool:
    """A declared tool. ``source == "relay"`` marks a declaration-only relay tool."""

    name: str
    description: str
    input_schema: dict[str, Any]
    execute: Execute
    source: Source = "native"


@dataclass
class RunResult:
    """What a run returns. ``to_wire()`` is the protocol's neutral shape (camelCase keys)."""

    text: str
    messages: list[dict[str, Any]]
    status: Status
    model: str
    turns: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(
        default_factory=lambda: {"promptTokens": 0, "completionTokens": 0, "totalTokens": 0}
    )
    limit: str | None = None
    pending: Request | None = None

    @property
    def tool_call_count(self) -> int:
        return len(self.tool_calls)

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "status": self.status,
            "text": self.text,
            "messages": self.messages,
            "model": self.model,
            "turns": self.turns,
            "toolCalls": self.tool_calls,
            "toolCallCount": self.tool_call_count,
            "usage": dict(self.usage),
        }
        pending = self.pending.to_wire() if self.pending is not None else None
        return _with_present(wire, limit=self.limit, pending=pending)

"""What the fake provider keeps about each request it received: the request itself (API
keys redacted, so records can be written to artifacts safely) and any rule it broke."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from toolnexus_conformance.helpers import fast_json

# Header names (lower case) whose value is a credential. Authorization keeps its scheme
# so a check can still tell "Bearer" from something else.
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key"})


@dataclass
class RecordedRequest:
    """One HTTP request as received. ``headers`` has lower-case names (Elixir's client
    lower-cases them anyway); repeated headers are joined with ", "."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    parsed: Any | None
    # status of the response sent back; filled in once the reply is decided
    status: int = 0

    def json_body(self) -> Any:
        """The parsed body; raises if the body was not JSON."""
        if self.parsed is None:
            raise ValueError(f"request {self.index} has no JSON body")
        return self.parsed


@dataclass(frozen=True)
class ProviderViolation:
    """A request the fake provider refused: ``code`` is a stable rule code to assert on,
    ``message`` the provider's own error text, ``request_index`` the offending request's
    index in its session (or in the provider's unrouted list)."""

    code: str
    message: str
    request_index: int
    status: int = 400


def redact_headers(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in pairs:
        key = name.lower()
        if key in _SECRET_HEADERS:
            value = _redacted(key, value)
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return headers


def _redacted(name: str, value: str) -> str:
    if name == "authorization":
        scheme, sep, _ = value.partition(" ")
        if sep:
            return f"{scheme} <redacted>"
    return "<redacted>"


def parse_json_body(body: bytes) -> Any | None:
    """The body as JSON, or None when it is empty or not valid UTF-8 JSON."""
    if not body:
        return None
    try:
        return fast_json.loads(body)
    except ValueError:  # UnicodeDecodeError and json.JSONDecodeError are ValueErrors
        return None

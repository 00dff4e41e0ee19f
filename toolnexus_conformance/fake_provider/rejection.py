"""The one value every request check of the fake provider returns: why a request is refused,
with the status and error fields of the provider's envelope."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rejection:
    code: str
    message: str
    status: int = 400
    error_type: str = "invalid_request_error"
    param: str | None = None  # OpenAI envelope only
    error_code: str | None = None  # OpenAI envelope's "code"

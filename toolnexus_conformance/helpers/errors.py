"""The harness's own exception types.

Every error the harness raises on purpose derives from :class:`HarnessError`. Its
``str()`` is meant to be shown to a user as is: a first line saying what happened, then
indented context (the shim's command line, its exit status, the tail of its stderr).
The plugin prints that text instead of a traceback.
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Sequence
from typing import Any

# ProtocolError (one bad wire line) lives in jsonrpc, the bottom of the import graph; it is
# re-exported here so every harness error can be imported from one place.
from toolnexus_conformance.helpers.jsonrpc import ErrorCode
from toolnexus_conformance.helpers.jsonrpc import ProtocolError as ProtocolError  # noqa: PLC0414 - an explicit re-export

# Enough of the stderr tail to diagnose a crash without drowning the report; the full
# (bounded) tail stays available on the exception as ``stderr_tail``.
SHOWN_STDERR_LINES = 40


class HarnessError(Exception):
    """Base of every error the harness raises on purpose."""


class HostRequestError(HarnessError):
    """Raised by a host handler to answer a shim→harness request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data


class HostProtocolViolation(HostRequestError):
    """A shim→harness request the protocol does not allow (e.g. an unknown ``host.*``
    method): answered with this JSON-RPC error so the shim does not hang, and it fails
    the call that was running, as a protocol error."""


def render_command(argv: Sequence[str] | None, cwd: str | None = None) -> str:
    if not argv:
        return "(none)"
    text = shlex.join(argv)
    return f"{text}  (cwd: {cwd})" if cwd else text


def render_stderr_tail(tail: str, max_lines: int = SHOWN_STDERR_LINES) -> list[str]:
    lines = tail.rstrip("\n").splitlines()
    if not lines:
        return ["  stderr: (empty)"]
    shown = lines[-max_lines:]
    head = f"  stderr tail (last {len(shown)} of {len(lines)} lines):"
    return [head, *(f"    | {line}" for line in shown)]


class ShimError(HarnessError):
    """Something went wrong talking to a shim; carries the shim's command and stderr tail."""

    def __init__(
        self,
        summary: str = "",
        *,
        command: Sequence[str] | None = None,
        cwd: str | None = None,
        stderr_tail: str = "",
        method: str | None = None,
    ) -> None:
        super().__init__(summary)
        self.summary = summary
        self.command = list(command) if command else []
        self.cwd = cwd
        self.stderr_tail = stderr_tail
        self.method = method

    def details(self) -> list[str]:
        """Extra indented lines a subclass wants between the summary and the stderr tail."""
        return []

    def during(self, method: str) -> ShimError:
        """A copy naming the call that was waiting when this (process-wide) failure happened."""
        clone = copy.copy(self)
        clone.method = method
        clone.summary = f"{self.summary} (during {method})"
        clone.args = (clone.summary,)
        return clone

    def __str__(self) -> str:
        lines = [self.summary, *self.details()]
        lines.append(f"  shim command: {render_command(self.command, self.cwd)}")
        lines.extend(render_stderr_tail(self.stderr_tail))
        return "\n".join(lines)


class ShimStartError(ShimError):
    """The shim's process could not be spawned at all (missing program, bad cwd, …)."""


class ShimNotRunning(ShimError):
    """A call was made on a shim process that is stopped or was given up on."""


class ShimCrashed(ShimError):
    """The shim's process exited (or closed its stdout) while the harness needed it."""

    def __init__(self, summary: str = "", *, returncode: int | None = None, **context: Any) -> None:
        super().__init__(summary, **context)
        self.returncode = returncode


class ShimTimeout(ShimError):
    """A call got no response in time; the harness sent ``$/cancel`` and killed the shim."""

    def __init__(self, summary: str = "", *, timeout: float = 0.0, **context: Any) -> None:
        super().__init__(summary, **context)
        self.timeout = timeout


class ShimProtocolError(ShimError):
    """The shim broke the wire protocol (bad line, unknown id, oversized line, bad shape)."""


class ProtocolVersionMismatch(ShimError):
    """The shim speaks another shim-protocol version; restarting it cannot help."""


class ShimRestartBudgetExceeded(ShimError):
    """The shim had to be restarted more often than the session allows."""


class ShimCallError(ShimError):
    """The shim answered a call with a JSON-RPC error response."""

    def __init__(self, summary: str, *, code: int, message: str, data: Any = None, **context: Any) -> None:
        super().__init__(summary, **context)
        self.code = code
        self.message = message
        self.data = data

    @property
    def is_port_error(self) -> bool:
        return self.code == ErrorCode.PORT_ERROR

    def details(self) -> list[str]:
        if self.data is None:
            return []
        return [f"  error data: {self.data!r}"[:2000]]


class OutgoingMessageTooLarge(HarnessError):
    """The harness refused to send a message over the protocol's line limit. The message is
    built from the scenario's data (prompt, toolkit, history, answers), so this is a problem
    of the scenario: nothing was written to the shim, which stays usable."""

    def __init__(self, summary: str, *, method: str, size: int, limit: int) -> None:
        super().__init__(summary)
        self.method, self.size, self.limit = method, size, limit


class HostHandlerFailed(HarnessError):
    """A harness-side host handler raised unexpectedly while answering the shim (a harness bug)."""

"""§10 suspension outcomes shared by the run loop and resume: the fixed result texts
(placeholder, declined, unresolved), the extension point relay plugs into, and the durable
settlement of a turn (halt at the first suspension in call order).

The extension point keeps relay removable: the loop only ever calls the three methods of
:class:`SuspensionExtension`, and :class:`NoExtension` makes them inert, so a client built
with relay switched off never imports ``reference_py.relay``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .providers.base import Call
from .types import Answer, Request, ToolResult


def placeholder(request: Request) -> ToolResult:
    """The halted call's transcript result: the prompt only (never the url), an error."""
    return ToolResult(output=request.prompt, is_error=True)


def declined(request: Request) -> ToolResult:
    return ToolResult(output="declined/expired: " + request.prompt, is_error=True)


def unresolved(request: Request) -> ToolResult:
    return ToolResult(output="unresolved: " + request.prompt, is_error=True)


def no_result_supplied(name: str) -> ToolResult:
    return ToolResult(output=f"no result supplied on resume for {name}", is_error=True)


class SuspensionExtension(Protocol):
    """How a suspension kind may refine the generic §10 handling (relay is the one user)."""

    def stamp(self, request: Request, call: Call, args: dict[str, Any], raw_arguments: str) -> Request:
        """The Request to surface for a call that suspended with ``request``."""
        ...

    def merge(self, first: Request, later: Sequence[Request]) -> Request:
        """The Request a durable halt surfaces, given later suspensions of the same turn."""
        ...

    def resume_result(self, pending: Request, answer: Answer, call: Call) -> ToolResult | None:
        """The result for ``call`` on resume when ``pending`` answers it; None if not its concern."""
        ...


class NoExtension:
    """Plain §10: no stamping, no merging, nothing answered on resume by the Request kind."""

    def stamp(self, request: Request, call: Call, args: dict[str, Any], raw_arguments: str) -> Request:
        return request

    def merge(self, first: Request, later: Sequence[Request]) -> Request:
        return first

    def resume_result(self, pending: Request, answer: Answer, call: Call) -> ToolResult | None:
        return None


@dataclass
class CallOutcome:
    """One call's outcome; ``suspended`` is set only when it suspended with no wait_for."""

    call: Call
    args: dict[str, Any]
    result: ToolResult
    suspended: Request | None = None


@dataclass
class Settlement:
    """What a turn leaves in the transcript, and the Request to halt on (if any)."""

    kept: list[CallOutcome]
    halt: Request | None


def settle(outcomes: Sequence[CallOutcome], extension: SuspensionExtension) -> Settlement:
    """Keep results up to and including the first suspension in call order; drop the rest."""
    for index, outcome in enumerate(outcomes):
        if outcome.suspended is not None:
            later = [o.suspended for o in outcomes[index + 1 :] if o.suspended is not None]
            return Settlement(list(outcomes[: index + 1]), extension.merge(outcome.suspended, later))
    return Settlement(list(outcomes), None)

"""The shim's host callbacks (its ``host.*`` requests during a call): answering each with
the caller's handler, and what answering them says about the call.

Each callback is answered on the transport's handler pool, not on the stdout reader, since
a handler may wait (a waitFor hold). A handler that names the methods it answers without ever
waiting (:func:`answers_at_once`) has those answered on the reader: the hand-off cost more
than the answer. Every answer is queued through ``send``, which never blocks
(:mod:`toolnexus_conformance.shim.stdin`).
Whatever goes wrong while answering is kept on the :class:`PendingCall` and fails the call
once it ends: a harness bug, an answer too large to send, or a request the protocol does not
have. The shim always gets an answer, so it never waits on one forever.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from toolnexus_conformance.helpers.errors import (
    HarnessError,
    HostHandlerFailed,
    HostProtocolViolation,
    HostRequestError,
    OutgoingMessageTooLarge,
    ShimProtocolError,
)
from toolnexus_conformance.helpers.jsonrpc import ErrorCode, ErrorObject, Message, Request, Response

HostHandler = Callable[[str, Any], Any]
"""Answers one shim→harness request: (method, params) -> result; raise HostRequestError to refuse."""
Send = Callable[[Message, str], None]


def answers_at_once(handler: HostHandler | None) -> frozenset[str]:
    """The callback methods ``handler`` answers without ever waiting: its ``answers_at_once``
    attribute, when it has one (:class:`toolnexus_conformance.run.host.Host` has)."""
    return frozenset(getattr(handler, "answers_at_once", ()))


@dataclass
class PendingCall:
    """One harness→shim request awaiting its response, and its callbacks' problems."""

    id: int
    method: str
    handler: HostHandler | None
    future: Future[Response] = field(default_factory=Future)
    handler_failures: list[BaseException] = field(default_factory=list)
    protocol_faults: list[str] = field(default_factory=list)
    too_large: list[OutgoingMessageTooLarge] = field(default_factory=list)

    def raise_problems(self, context: Callable[[], dict[str, Any]]) -> None:
        """Fail the (ended) call with the first problem its callbacks had, if any; ``context()``
        gives the error's shim context (command, stderr tail) when one is raised."""
        if self.handler_failures:
            first = self.handler_failures[0]
            raise HostHandlerFailed(
                f"a host handler raised while answering the shim during {self.method}: {first!r}"
            ) from first
        if self.too_large:
            raise self.too_large[0]
        if self.protocol_faults:
            # The stream itself is intact, but a shim that breaks the protocol is not trusted
            # further: the session restarts it before the next call.
            raise ShimProtocolError(
                f"shim broke the protocol during {self.method}: {'; '.join(self.protocol_faults)}", **context()
            )


def answer_callback(owner: PendingCall, request: Request, send: Send, *, listening: Callable[[], bool]) -> None:
    """Answer one callback with ``owner``'s handler; ``listening()`` is False once the shim is gone."""
    assert owner.handler is not None
    try:
        try:
            answer = Response(request.id, result=owner.handler(request.method, request.params))
        except HostProtocolViolation as exc:
            # Answered, so the shim does not wait forever; and it fails the call.
            owner.protocol_faults.append(exc.message)
            answer = Response(request.id, error=ErrorObject(exc.code, exc.message, exc.data))
        except HostRequestError as exc:
            answer = Response(request.id, error=ErrorObject(exc.code, exc.message, exc.data))
        except HarnessError as exc:
            # A deliberate refusal by the host (e.g. a scenario makes waitFor raise).
            answer = Response(request.id, error=ErrorObject(ErrorCode.INTERNAL_ERROR, str(exc)))
        if listening():  # otherwise the shim is gone or poisoned; nobody listens
            _send_answer(owner, request, answer, send)
            sent = getattr(owner.handler, "answered", None)  # a handler may order its answers by their sending
            if sent is not None:
                sent(request.method, request.params)
    except Exception as exc:  # noqa: BLE001 - a harness bug: recorded, raised by call()
        owner.handler_failures.append(exc)
        if listening():
            error = ErrorObject(ErrorCode.INTERNAL_ERROR, f"harness host handler failed: {exc!r}")
            with contextlib.suppress(Exception):  # already recorded above
                send(Response(request.id, error=error), request.method)


def _send_answer(owner: PendingCall, request: Request, answer: Response, send: Send) -> None:
    try:
        send(answer, request.method)
    except OutgoingMessageTooLarge as exc:
        # The shim still gets an answer (an error it can fit), so its run can end; the call
        # then fails with the size problem, blamed on the scenario.
        owner.too_large.append(exc)
        error = ErrorObject(ErrorCode.INTERNAL_ERROR, (
            f"the harness could not send its answer: it is over the {exc.limit} byte line limit "
            "of the shim protocol (a problem of the scenario's data)"))
        send(Response(request.id, error=error), request.method)

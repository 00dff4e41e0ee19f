"""The host a shim talks back to during ``client.run``: waitFor, the durable store, hooks.

The harness plays the host so that what a port asks for is recorded and answered from the
scenario alone. The store lives here, not in the shim, so a transcript survives a shim
restart the way it survives a process restart in a durable host. Handlers run on the
transport's thread pool, so several callbacks can be outstanding at once; ``holdUntil``
parks every waitFor until N are outstanding together, which is how a port that calls back
one at a time is caught (recorded as a host violation, then answered so the run ends).

With ``answerOrder`` the held callbacks are answered one at a time in that order of answer
keys, each only once the one before was sent (the transport calls :meth:`Host.answered`
after it wrote an answer), so a port sees its answers arrive in a drawn order; a hold that
ran out answers at once (a port calling back one at a time would wait for an answer the
order puts after one it never asks for).

The hold ends on the arrival that makes N outstanding, never on a clock. Only a hold that
is never reached waits, and for a share of the per-call timeout (``--port-timeout``, or the
port's own): long enough that a correct port, however loaded, has every concurrent callback
out by then, and short enough that the run still ends inside its call after the release.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolnexus_conformance.helpers.errors import HostProtocolViolation, HostRequestError
from toolnexus_conformance.helpers.json_copy import copy_json
from toolnexus_conformance.helpers.jsonrpc import ErrorCode

# A never-reached hold waits this share of the per-call timeout. A correct port has all its
# concurrent callbacks out within its slowest tool's delayMs plus scheduling jitter, and
# the share leaves an order of magnitude above that even on a loaded machine
# (benchmarks/hold_margin.py measures the margin; benchmarks/flake_rate.py counts flakes).
HOLD_SHARE_OF_CALL_TIMEOUT = 0.1
DEFAULT_HOLD_TIMEOUT_S = 1.0


def hold_timeout_for(call_timeout: float) -> float:
    """How long a ``holdUntil`` that is never reached waits, given the per-call timeout."""
    return call_timeout * HOLD_SHARE_OF_CALL_TIMEOUT


HOST_REFUSED = -32010
HOST_METHODS = ("host.waitFor", "host.store.get", "host.store.save", "host.hook")


class HostRefusal(HostRequestError):
    """The host answers a callback with a JSON-RPC error (a scenario asked waitFor to raise)."""

    def __init__(self, message: str) -> None:
        super().__init__(HOST_REFUSED, message)


@dataclass(frozen=True)
class Exchange:
    """One Request the port put to the host and the Answer the host gave it; ``answer`` is
    None when the host raised instead (a scenario asked waitFor to raise, or the callback
    carried no Request). Checks read what the host answered here, never re-derive it."""

    request: Any
    answer: dict[str, Any] | None


@dataclass(frozen=True)
class HoldRelease:
    """How a phase's ``holdUntil`` ended: on the arrival that made ``outstanding`` callbacks
    outstanding together (``timed_out`` False), or when its wait ran out with fewer.
    ``waited_s`` is how long the first parked callback waited (a measurement, never judged)."""

    outstanding: int
    timed_out: bool
    waited_s: float = 0.0


@dataclass
class HostLog:
    """Everything the port asked the host, in arrival order."""

    wait_for: list[dict[str, Any]] = field(default_factory=list)
    # Per waitFor, in the same order: whether the stream's consumer had its pending event
    # (host.waitFor pendingEventSeen; None where the shim does not say: not a stream).
    pending_seen: list[bool | None] = field(default_factory=list)
    hooks: list[dict[str, Any]] = field(default_factory=list)
    saves: list[dict[str, Any]] = field(default_factory=list)
    gets: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    max_outstanding: int = 0
    exchanges: list[Exchange] = field(default_factory=list)  # every waitFor, with what the host replied
    hold: HoldRelease | None = None  # None: the scenario holds nothing, or no waitFor came

    @property
    def answers(self) -> list[dict[str, Any]]:
        """Every Answer the host sent back, in the order it sent them."""
        return [e.answer for e in self.exchanges if e.answer is not None]


class Store:
    """The durable ConversationStore, kept across shim restarts within one variant."""

    def __init__(self) -> None:
        self._data: dict[str, list[Any]] = {}
        self._lock = threading.Lock()

    def get(self, conversation_id: str) -> list[Any] | None:
        with self._lock:
            found = self._data.get(conversation_id)
            return copy_json(found) if found is not None else None

    def save(self, conversation_id: str, messages: list[Any]) -> None:
        with self._lock:
            self._data[conversation_id] = copy_json(messages)


class Host:
    """Answers one phase's callbacks from the scenario's host block; call it as the handler."""

    # Only waitFor may wait (a hold); the others are answered as they come, on the shim's
    # reader (shim_callbacks.answers_at_once).
    answers_at_once = frozenset({"host.store.get", "host.store.save", "host.hook"})

    def __init__(
        self,
        wait_spec: dict[str, Any] | None,
        hook_rules: Sequence[dict[str, Any]],
        store: Store,
        log: HostLog,
        *,
        hold_timeout: float = DEFAULT_HOLD_TIMEOUT_S,
    ) -> None:
        self._wait_spec = wait_spec or {}
        self._hold_timeout = hold_timeout
        self._hook_rules = list(hook_rules)
        self._store = store
        self.log = log
        self._cond = threading.Condition()
        self._outstanding = 0
        self._released = False
        self._parked_since: float | None = None
        self._order: list[str] = list(self._wait_spec.get("answerOrder", []))
        self._claimed = 0  # how many of _order's turns a callback has taken
        self._sent = 0  # how many of those answers the transport has sent
        self._in_order: set[int] = set()  # id() of the params of callbacks answering in their turn

    def handle(self, method: str, params: dict[str, Any]) -> Any:
        if method == "host.waitFor":
            return self._wait_for(params)
        if method == "host.store.get":
            self.log.gets.append(params["id"])
            return {"messages": self._store.get(params["id"])}
        if method == "host.store.save":
            self.log.saves.append({"id": params["id"], "messages": copy_json(params["messages"])})
            self._store.save(params["id"], params["messages"])
            return {}
        if method == "host.hook":
            return self._hook(params)
        # Answered (so the shim does not hang) and a protocol error failing the variant.
        raise HostProtocolViolation(
            ErrorCode.METHOD_NOT_FOUND, f"unknown host method {method!r} (the host answers {', '.join(HOST_METHODS)})"
        )

    __call__ = handle

    def _wait_for(self, params: dict[str, Any]) -> dict[str, Any]:
        request: Any = params.get("request")
        self.log.wait_for.append(copy_json(request))
        seen = params.get("pendingEventSeen")
        self.log.pending_seen.append(seen if isinstance(seen, bool) else None)
        if not isinstance(request, dict):
            self._log_exchange(request, None)
            raise HostRefusal("host.waitFor params carry no request object")
        self._hold()
        self._await_turn(answer_key(request), params)
        if self._wait_spec.get("raise"):
            self._log_exchange(request, None)
            raise HostRefusal("the host's waitFor raised (scenario asks for it)")
        answer = self._answer_for(request)
        self._log_exchange(request, answer)
        return {"answer": answer}

    def _log_exchange(self, request: Any, answer: dict[str, Any] | None) -> None:
        with self._cond:  # handlers run concurrently; keep each pair whole
            self.log.exchanges.append(Exchange(copy_json(request), copy_json(answer)))

    def _hold(self) -> None:
        wanted = self._wait_spec.get("holdUntil")
        with self._cond:
            self._outstanding += 1
            self.log.max_outstanding = max(self.log.max_outstanding, self._outstanding)
            if wanted and not self._released:
                if self._parked_since is None:
                    self._parked_since = time.monotonic()
                if self._outstanding >= wanted:
                    self._release(timed_out=False)
                elif not self._cond.wait_for(lambda: self._released, timeout=self._hold_timeout):
                    self.log.violations.append(
                        f"waitFor callbacks were not outstanding together: held {self._outstanding} "
                        f"for {self._hold_timeout:g} s, the scenario needs {wanted} at once"
                    )
                    self._release(timed_out=True)
            self._outstanding -= 1

    def _await_turn(self, key: Any, params: dict[str, Any]) -> None:
        """With ``answerOrder``: wait until the answer before was sent and ``key`` is the next
        in the order, then take that turn (a key the order no longer lists answers at once)."""
        if not self._order:
            return
        with self._cond:
            if (self.log.hold is not None and self.log.hold.timed_out) or key not in self._order[self._claimed:]:
                return
            if not self._cond.wait_for(lambda: self._turn_of(key), timeout=self._hold_timeout):
                self.log.violations.append(f"waitFor {key!r} never came to its turn in the answer order {self._order}")
                self._order = []  # the rest answer as they come
                self._cond.notify_all()
                return
            if self._claimed < len(self._order):
                self._claimed += 1
                self._in_order.add(id(params))

    def _turn_of(self, key: Any) -> bool:
        """Whether ``key`` may answer now (the caller holds ``_cond``)."""
        if self._claimed >= len(self._order):
            return True
        return self._sent == self._claimed and self._order[self._claimed] == key

    def answered(self, method: str, params: dict[str, Any]) -> None:
        """The transport sent this callback's answer: if it answered in its turn, the next
        key's turn comes."""
        if method != "host.waitFor" or not self._order:
            return
        with self._cond:
            if id(params) in self._in_order:
                self._in_order.discard(id(params))
                self._sent += 1
                self._cond.notify_all()

    def _release(self, *, timed_out: bool) -> None:
        """Let every parked waitFor go (the caller holds ``_cond``); the hold never returns."""
        self._released = True
        waited = time.monotonic() - self._parked_since if self._parked_since is not None else 0.0
        self.log.hold = HoldRelease(self._outstanding, timed_out, waited)
        self._cond.notify_all()

    def _answer_for(self, request: dict[str, Any]) -> dict[str, Any]:
        answers = self._wait_spec.get("answers", {})
        key = answer_key(request)
        template = answers.get(key) or answers.get("*")
        if template is None:
            self.log.violations.append(f"no scripted answer for waitFor request {key!r}")
            return {"id": request.get("id", ""), "ok": False, "reason": "declined"}
        answer = copy_json(template)
        answer.setdefault("id", request.get("id", ""))
        return answer

    def _hook(self, params: dict[str, Any]) -> dict[str, Any]:
        self.log.hooks.append(copy_json(params))
        if params.get("name") != "beforeTool":
            return {"override": None}
        event = params.get("event") or {}
        for rule in self._hook_rules:
            if rule["tool"] == event.get("name"):
                return {"override": {k: v for k, v in rule.items() if k != "tool"}}
        return {"override": None}


def answer_key(request: dict[str, Any]) -> Any:
    """Which of the scenario's answers a Request gets: a relay Request with one call by
    ``call:<id>``, any other by its id."""
    calls = (request.get("data") or {}).get("calls") if request.get("kind") == "tool_call" else None
    if isinstance(calls, list) and len(calls) == 1 and isinstance(calls[0], dict):
        return f"call:{calls[0].get('id')}"
    return request.get("id")

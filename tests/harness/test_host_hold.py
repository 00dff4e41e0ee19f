"""The host's ``holdUntil``: it ends on the arrival that makes N waitFor callbacks outstanding
together, and a hold that is never reached is reported as a host violation once the wait it
was given (a share of the per-call timeout) runs out.

No assertion here is about speed: a release is shown to come from the Nth arrival by the
order of events and by :class:`HoldRelease`, with a hold timeout far longer than any join
guard, so a release by the clock would fail the test instead of passing slowly.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from toolnexus_conformance.run.host import HoldRelease, Host, HostLog, Store, hold_timeout_for
from toolnexus_conformance.run.runner import run_variant
from toolnexus_conformance.scenario.model import Scenario

NEVER_S = 3600.0  # a hold that would only end by its clock never ends within a test
JOIN_GUARD_S = 30.0  # how long a test waits for a thread before calling it hung

ANSWERS = {"answers": {"*": {"ok": True, "data": {"output": "yes"}}}}


def request(n: int) -> dict[str, Any]:
    return {"request": {"id": f"r{n}", "kind": "approval", "prompt": f"approve {n}?"}}


def wait_until_parked(host: Host, count: int) -> None:
    """Block until ``count`` waitFor callbacks sit in the hold (or fail after the guard)."""
    done = threading.Event()

    def poll() -> None:
        while host.log.max_outstanding < count:
            done.wait(0.001)
        done.set()

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    assert done.wait(JOIN_GUARD_S), f"only {host.log.max_outstanding} of {count} callbacks reached the hold"


def test_the_hold_ends_on_the_arrival_that_makes_n_outstanding() -> None:
    log = HostLog()
    host = Host({"holdUntil": 3, **ANSWERS}, [], Store(), log, hold_timeout=NEVER_S)
    order: list[str] = []
    lock = threading.Lock()

    def callback(n: int) -> None:
        reply = host.handle("host.waitFor", request(n))
        with lock:
            order.append(f"answered r{n}:{reply['answer']['data']['output']}")

    parked = [threading.Thread(target=callback, args=(n,), daemon=True) for n in (1, 2)]
    for thread in parked:
        thread.start()
    wait_until_parked(host, 2)
    with lock:
        order.append("third sent")
    third = threading.Thread(target=callback, args=(3,), daemon=True)
    third.start()
    for thread in [*parked, third]:
        thread.join(JOIN_GUARD_S)
        assert not thread.is_alive(), "a parked waitFor was not released by the third arrival"

    assert order[0] == "third sent", order  # nobody was answered before the Nth callback came
    assert sorted(order[1:]) == ["answered r1:yes", "answered r2:yes", "answered r3:yes"]
    assert log.hold is not None and (log.hold.outstanding, log.hold.timed_out) == (3, False)
    assert log.violations == []
    assert log.max_outstanding == 3


def test_callbacks_after_the_release_are_not_held_again() -> None:
    log = HostLog()
    host = Host({"holdUntil": 1, **ANSWERS}, [], Store(), log, hold_timeout=NEVER_S)
    for n in range(3):  # sequential: would hang here if each were held anew
        host.handle("host.waitFor", request(n))
    assert log.hold == HoldRelease(1, False, log.hold.waited_s if log.hold else 0.0)
    assert log.violations == []


def test_a_hold_never_reached_is_a_host_violation_naming_its_timeout() -> None:
    log = HostLog()
    host = Host({"holdUntil": 2, **ANSWERS}, [], Store(), log, hold_timeout=0.05)
    reply = host.handle("host.waitFor", request(1))  # the second never comes (a sequential port)

    assert reply == {"answer": {"id": "r1", "ok": True, "data": {"output": "yes"}}}  # answered, so the run ends
    assert log.violations == [
        "waitFor callbacks were not outstanding together: held 1 for 0.05 s, the scenario needs 2 at once"]
    assert log.hold is not None and (log.hold.outstanding, log.hold.timed_out) == (1, True)
    assert log.hold.waited_s >= 0.05  # it waited its configured time, not less


def test_the_hold_timeout_is_a_share_of_the_per_call_timeout() -> None:
    assert hold_timeout_for(10.0) == pytest.approx(1.0)
    assert hold_timeout_for(30.0) == pytest.approx(3 * hold_timeout_for(10.0))
    assert hold_timeout_for(10.0) < 10.0 / 2  # the run still ends inside its call after the release


class SequentialShim:
    """A shim whose two suspending tools call back one after the other (never together)."""

    def call(self, method: str, params: dict[str, Any], *, timeout: float, handler: Any = None) -> Any:
        if method == "toolkit.describe":
            return {"openai": [], "anthropic": [], "gemini": []}
        for n in (1, 2):
            handler("host.waitFor", request(n))
        return {"result": {"status": "done", "text": "", "messages": []}, "events": [], "executions": []}

    def restart(self) -> None:
        raise AssertionError("not a restarting scenario")


def test_the_runner_gives_the_host_the_share_of_the_call_timeout(tmp_path: Any) -> None:
    data = {
        "id": "hold-sequential", "title": "t", "rules": ["susp.waitfor-concurrent"], "styles": ["openai"],
        "entries": ["run"], "prompt": "p",
        "toolkit": {"tools": [{"name": f"t{n}", "description": "d", "schema": {"type": "object"},
                               "behaviour": {"suspend": {"id": f"r{n}", "kind": "approval", "prompt": "?"},
                                             "then": {"reply": "ok"}}} for n in (1, 2)]},
        "host": {"waitFor": {"holdUntil": 2, **ANSWERS}},
        "turns": [{"text": "done"}], "expect": {"status": "done"},
    }
    variant = next(Scenario(path=tmp_path / "hold-sequential.json", data=data, digest="0").variants())

    class NoProvider:
        def session(self, turns: Any, style: str) -> Any:
            return type("S", (), {"requests": [], "violations": [], "base_url": "http://127.0.0.1:9",
                                  "root_url": "http://127.0.0.1:9"})()

        def end_session(self, session: Any) -> None:
            pass

    record = run_variant(variant, SequentialShim(), NoProvider(), timeout=0.5)  # type: ignore[arg-type]
    assert record.first.host.violations == [
        "waitFor callbacks were not outstanding together: held 1 for 0.05 s, the scenario needs 2 at once"]

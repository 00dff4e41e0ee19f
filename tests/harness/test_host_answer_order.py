"""The host's ``answerOrder`` (toolnexus_conformance/run/host.py): once a ``holdUntil`` is reached, the held
waitFor callbacks are answered one at a time in the drawn order, each only after the one
before was sent; a key listed twice answers two callbacks; keys the order does not list
answer at once; a hold that ran out ignores the order. And a real run through the reference
shim receives its answers in that order.

The "sent" step is the transport's call of :meth:`Host.answered`; the threads here play the
transport, so an order is shown by what each callback returned before the next one's turn.
"""

from __future__ import annotations

import threading
from typing import Any

from toolnexus_conformance.differential.search import as_scenario
from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.run.host import Host, HostLog, Store, answer_key
from toolnexus_conformance.run.runner import run_variant
from toolnexus_conformance.shim.session import ShimSession

NEVER_S = 3600.0
JOIN_GUARD_S = 30.0
ANSWERS = {"answers": {"*": {"ok": True, "data": {"output": "yes"}}}}


def _params(request_id: str) -> dict[str, Any]:
    return {"request": {"id": request_id, "kind": "approval", "prompt": f"{request_id}?"}}


def _answered_in_order(spec: dict[str, Any], ids: list[str], *, hold_timeout: float = NEVER_S) -> list[str]:
    """Each id's callback on its own thread, as the transport runs them: the ids in the order
    their answers were sent."""
    host = Host({**ANSWERS, **spec}, [], Store(), HostLog(), hold_timeout=hold_timeout)
    sent: list[str] = []
    lock = threading.Lock()

    def transport(request_id: str) -> None:
        params = _params(request_id)
        reply = host.handle("host.waitFor", params)
        with lock:
            sent.append(reply["answer"]["id"])
        host.answered("host.waitFor", params)

    threads = [threading.Thread(target=transport, args=(i,), daemon=True) for i in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_GUARD_S)
        assert not thread.is_alive(), "a callback never got its answer"
    return sent


def test_held_callbacks_are_answered_in_the_drawn_order() -> None:
    assert _answered_in_order({"holdUntil": 3, "answerOrder": ["c", "a", "b"]}, ["a", "b", "c"]) == ["c", "a", "b"]


def test_a_key_listed_twice_answers_two_callbacks_in_its_turns() -> None:
    order = {"holdUntil": 3, "answerOrder": ["x", "y", "x"]}
    assert _answered_in_order(order, ["x", "x", "y"]) == ["x", "y", "x"]


def test_a_key_the_order_does_not_list_answers_at_once() -> None:
    sent = _answered_in_order({"holdUntil": 3, "answerOrder": ["b", "a"]}, ["a", "b", "free"])
    assert sent.index("b") < sent.index("a")


def test_a_hold_that_ran_out_ignores_the_order() -> None:
    # two of three callbacks ever come: the hold runs out, and "b" must not wait for "c"
    sent = _answered_in_order({"holdUntil": 3, "answerOrder": ["c", "b", "a"]}, ["a", "b"], hold_timeout=0.2)
    assert sorted(sent) == ["a", "b"]


def test_a_run_receives_its_answers_in_the_drawn_order(reference_shim: ShimSession, shared_provider: FakeProvider) -> None:
    scenario = {
        "id": "host-answer-order", "title": "Three concurrent approvals answered last first",
        "rules": ["susp.waitfor-concurrent"], "styles": ["openai"], "entries": ["run"],
        "toolkit": {"tools": [
            {"name": name, "description": name, "schema": {"type": "object"},
             "behaviour": {"suspend": {"id": f"req-{name}", "kind": "approval", "prompt": f"{name}?"},
                           "then": {"replyWithAnswerOutput": True}}} for name in ("a", "b", "c")]},
        "host": {"waitFor": {"holdUntil": 3, "answerOrder": ["req-c", "req-b", "req-a"], "answers": {
            f"req-{name}": {"ok": True, "data": {"output": f"{name} approved"}} for name in ("a", "b", "c")}}},
        "prompt": "Approve all three.",
        "turns": [{"toolCalls": [{"id": f"call_{n}", "name": n, "arguments": "{}"} for n in ("a", "b", "c")]},
                  {"text": "All approved."}],
    }
    record = run_variant(next(as_scenario(scenario).variants()), reference_shim, shared_provider, timeout=10)
    assert record.first.error is None and not record.first.host.violations, record.first.host.violations
    assert [answer_key(e.request) for e in record.first.host.exchanges] == ["req-c", "req-b", "req-a"]
    assert record.first.result is not None and record.first.result["status"] == "done"

"""RunAhead: one worker thread, runs in the order asked for, results and errors handed to
the one who takes them, and nothing left running after close."""

from __future__ import annotations

import threading
import time

import pytest

from harness.run_ahead import RunAhead


class Recorder:
    """A run that logs its begin and end, can be held at its begin, and fails on demand."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, str]] = []
        self.threads: set[str] = set()
        self.gates: dict[str, threading.Event] = {}
        self.failing: set[str] = set()
        self.running = 0
        self.most = 0
        self._lock = threading.Lock()

    def __call__(self, key: str) -> str:
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        self.threads.add(threading.current_thread().name)
        self.log.append(("begin", key, threading.current_thread().name))
        gate = self.gates.get(key)
        if gate is not None:
            assert gate.wait(10), f"run {key} was never released"
        time.sleep(0.002)
        self.log.append(("end", key, threading.current_thread().name))
        with self._lock:
            self.running -= 1
        if key in self.failing:
            raise RuntimeError(f"run {key} broke")
        return key.upper()


def test_runs_happen_one_at_a_time_in_the_order_they_are_started_on_one_worker_thread() -> None:
    runs = Recorder()
    ahead = RunAhead(runs)
    for key in "abcd":
        ahead.start(key)
    assert [ahead.take(key) for key in "abcd"] == ["A", "B", "C", "D"]
    ahead.close()
    assert [key for what, key, _ in runs.log if what == "begin"] == list("abcd")
    assert runs.most == 1, "two runs overlapped: the shim would see interleaved calls"
    assert len(runs.threads) == 1 and threading.main_thread().name not in runs.threads


def test_a_run_started_ahead_goes_on_while_the_caller_works() -> None:
    runs = Recorder()
    runs.gates["b"] = threading.Event()
    ahead = RunAhead(runs)
    assert ahead.take("a") == "A"
    ahead.start("b")
    deadline = time.monotonic() + 10
    while ("begin", "b") not in [(w, k) for w, k, _ in runs.log] and time.monotonic() < deadline:
        time.sleep(0.001)
    assert ("begin", "b") in [(w, k) for w, k, _ in runs.log], "b did not start before it was taken"
    assert ahead.ahead() == ["b"]
    runs.gates["b"].set()
    assert ahead.take("b") == "B"
    assert ahead.ahead() == []
    ahead.close()


def test_taking_a_key_nobody_started_runs_it_then_and_a_second_start_does_not_rerun_it() -> None:
    runs = Recorder()
    ahead = RunAhead(runs)
    ahead.start("a")
    ahead.start("a")
    assert ahead.take("a") == "A"
    assert ahead.take("b") == "B"
    ahead.close()
    assert [key for what, key, _ in runs.log if what == "begin"] == ["a", "b"]


def test_a_run_error_is_raised_to_its_taker_and_the_runs_after_it_go_on() -> None:
    runs = Recorder()
    runs.failing.add("b")
    ahead = RunAhead(runs)
    for key in "abc":
        ahead.start(key)
    assert ahead.take("a") == "A"
    with pytest.raises(RuntimeError, match="run b broke"):
        ahead.take("b")
    assert ahead.take("c") == "C"
    ahead.close()


def test_close_waits_for_the_run_under_way_and_later_takes_run_in_the_caller() -> None:
    runs = Recorder()
    runs.gates["a"] = threading.Event()
    ahead = RunAhead(runs)
    ahead.start("a")
    threading.Timer(0.05, runs.gates["a"].set).start()
    ahead.close()
    assert ("end", "a") in [(w, k) for w, k, _ in runs.log], "close returned while a run still used the shim"
    ahead.start("b")  # ignored once closed
    assert [k for w, k, _ in runs.log if w == "begin"] == ["a"]
    assert ahead.take("c") == "C"
    assert runs.log[-1] == ("end", "c", threading.current_thread().name)


def test_busy_while_a_run_is_queued_or_under_way_and_not_after() -> None:
    runs = Recorder()
    runs.gates["a"] = threading.Event()
    ahead = RunAhead(runs)
    assert not ahead.busy()
    ahead.start("a")
    assert ahead.busy()
    runs.gates["a"].set()
    assert ahead.take("a") == "A"
    assert not ahead.busy()
    ahead.close()

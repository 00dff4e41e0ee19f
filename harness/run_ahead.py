"""Running the next variant while pytest judges this one.

A variant's time alternates between two processes: the port's shim runs it, then pytest
judges it (checks, normalization, golden comparison, reporting) while the shim idles. On a
machine with two cores both can work at once: as soon as variant N's run is over, the
next item's run starts on a worker thread while the main thread judges N.

What the port sees does not change. Runs happen on one worker thread, one at a time, in
item order, so the shim gets exactly the calls of a serial run. Only the next item is run
ahead (pytest names it to ``pytest_runtest_protocol``, in a serial session and in an xdist
worker alike), and only when its verdict does not rest on timing (``Scenario.timed``): a
timed variant runs when its own turn comes, with the main thread waiting on it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

Key = TypeVar("Key")
Result = TypeVar("Result")


class RunAhead(Generic[Key, Result]):
    """One worker thread running ``run(key)`` in the order keys are asked for.

    ``start(key)`` begins a key's run if none is under way for it; ``take(key)`` returns its
    result, starting it first when nobody did. A run's exception is re-raised by ``take``.
    """

    def __init__(self, run: Callable[[Key], Result]) -> None:
        self._run = run
        self._started: dict[Key, Future[Result]] = {}
        self._last: Future[Result] | None = None  # runs are serial: only the last can be unfinished
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False

    def start(self, key: Key) -> None:
        with self._lock:
            if self._closed or key in self._started:
                return
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="conformance-run")
            self._started[key] = self._last = self._executor.submit(self._run, key)

    def take(self, key: Key) -> Result:
        self.start(key)
        with self._lock:
            future = self._started.pop(key, None)
        if future is None:  # closed: the session is ending, run in this thread
            return self._run(key)
        return future.result()

    def ahead(self) -> list[Key]:
        """Keys started and not taken yet (a run ahead that no item will ask for)."""
        with self._lock:
            return list(self._started)

    def busy(self) -> bool:
        """A run is queued or under way (nobody may be waiting for it any more)."""
        with self._lock:
            return self._last is not None and not self._last.done()

    def close(self) -> None:
        """Start nothing more and wait for the run under way (it owns the shim until done)."""
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)

"""The shim's stdin, written from a thread of its own so no other thread ever blocks on it.

A shim that stops reading its stdin fills the pipe (64 KiB on Linux); a blocking write
then parks the writer for good. If that writer were the stdout reader answering a
callback, or a caller holding a lock, every later call would wait forever. Here no write blocks: :meth:`StdinWriter.put` writes what the pipe takes at
once (non-blocking) and queues the rest; one thread writes the queue as the shim reads,
with a poll that wakes it to notice :meth:`close`. How far behind the shim is (:meth:`backlog`) lets a timed-out call say
"the shim stopped reading its stdin" instead of "the shim did not answer".
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import IO

POLL_MS = 100  # how soon the writer notices close() while the pipe is full


@dataclass(frozen=True)
class Backlog:
    """Bytes queued for the shim that it has not taken, and for how long it took none."""

    pending_bytes: int
    stalled_s: float


class StdinWriter:
    """Queues lines for a shim's stdin and writes them in order from a daemon thread."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._fd = stream.fileno()
        os.set_blocking(self._fd, False)
        self._queue: deque[memoryview] = deque()
        self._pending = 0
        self._last_progress = time.monotonic()
        self._cond = threading.Condition()
        self._closed = False
        self._broken = False
        self._thread = threading.Thread(target=self._run, name="shim-stdin", daemon=True)
        self._thread.start()

    def put(self, line: bytes) -> None:
        """Queue ``line``; dropped silently once the pipe is broken (the exit is reported by
        whoever watches the process, with its status and stderr).

        With nothing queued the line is written at once, non-blocking: the common case costs
        no thread hand-off, and whatever the pipe cannot take now goes to the writer thread."""
        with self._cond:
            if self._closed or self._broken:
                return
            view = memoryview(line)
            if not self._queue:
                self._last_progress = time.monotonic()  # stalled time counts from now
                view = view[self._write_now(view):]
                if not view:
                    return
            self._queue.append(view)
            self._pending += len(view)
            self._cond.notify()

    def _write_now(self, view: memoryview) -> int:
        """One non-blocking write, under the lock (so writes never interleave); bytes taken."""
        try:
            return os.write(self._fd, view)
        except BlockingIOError:
            return 0
        except (OSError, ValueError):  # EPIPE/EBADF: the shim is gone
            self._broken = True
            self._queue.clear()
            self._pending = 0
            return len(view)

    def backlog(self) -> Backlog:
        with self._cond:
            stalled = time.monotonic() - self._last_progress if self._pending else 0.0
            return Backlog(self._pending, stalled)

    def close(self, timeout: float = 1.0) -> None:
        """Stop writing (what is still queued is dropped) and close the pipe: the shim's EOF."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        with contextlib.suppress(OSError, ValueError):
            self._stream.close()

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLOUT)
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed or self._broken:
                    return
                chunk = self._queue[0]
                written = self._write_now(chunk)
                if self._broken:
                    return
                if written:
                    self._last_progress = time.monotonic()
                    self._pending -= written
                    if written == len(chunk):
                        self._queue.popleft()
                    else:
                        self._queue[0] = chunk[written:]
                    continue
            poller.poll(POLL_MS)  # the shim is not reading: wait for room, or for close()

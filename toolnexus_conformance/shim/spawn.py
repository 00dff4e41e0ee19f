"""Starting a child process when the operating system refuses the first attempt for no
reason of the child's own.

Loaded CI runners occasionally fail a spawn with EFAULT, EAGAIN or ENOMEM (seen here: an
``execve`` in a vfork child returning "Bad address" while other threads were spawning
pytest runs). Such a failure says nothing about the shim or the port, so it is retried a
few times after a short pause. A command that is missing, not executable or otherwise
refused for a lasting reason fails at once.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

TRANSIENT_ERRNOS = frozenset({errno.EFAULT, errno.EAGAIN, errno.ENOMEM, errno.EINTR})
ATTEMPTS = 3
PAUSE_S = 0.2


def is_transient(exc: OSError) -> bool:
    return exc.errno in TRANSIENT_ERRNOS


def with_spawn_retry(spawn: Callable[[], T], *, attempts: int = ATTEMPTS, pause: float = PAUSE_S) -> T:
    """Call ``spawn`` (a Popen or subprocess.run); retry it on a transient OSError."""
    for attempt in range(1, attempts):
        try:
            return spawn()
        except OSError as exc:
            if not is_transient(exc):
                raise
            time.sleep(pause * attempt)
    return spawn()  # the last attempt: whatever it raises is the caller's error

"""One spawned shim process as the harness holds it: spawned as a group leader carrying an
instance token, watched for its exit without being reaped, ended together with every
process it started (:mod:`toolnexus_conformance.shim.process_tree`), and reaped exactly once.

The leader stays unreaped until the harness is done signalling it, so its pid and group id
cannot be reused by another process meanwhile; one lock orders signalling and reaping
across the threads that may do either (the caller on a timeout, the stdout reader, the exit
waiter).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence

from toolnexus_conformance.shim import process_tree
from toolnexus_conformance.shim.spawn import with_spawn_retry

TERM_GRACE_SECONDS = 2.0  # after SIGTERM, before SIGKILL
# Signals that end a process from outside; any other end is the process's own doing.
OUTSIDE_SIGNALS = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP})


class ShimChild:
    """A shim process: its pipes, its exit, and the end of it and its descendants."""

    def __init__(self, argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str] | None) -> None:
        """Spawn ``argv``; raises OSError/ValueError when it cannot be started at all."""
        self.token = process_tree.new_token()
        child_env = {**(os.environ if env is None else env), process_tree.TOKEN_VAR: self.token}
        # A new session makes the shim a process-group leader, so one killpg also reaches
        # children of wrapper commands (sh -c, go run, npx) that would hold the pipes open.
        self.proc: subprocess.Popen[bytes] = with_spawn_retry(lambda: subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=cwd, env=child_env, start_new_session=True,
        ))
        self._lock = threading.Lock()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def exited(self, timeout: float = 0.0) -> bool:
        """Wait up to ``timeout`` for the exit *without reaping* (so the group id stays ours)."""
        if self._exited_now() or timeout <= 0:
            return self._exited_now()
        deadline = time.monotonic() + timeout
        # Woken by the exit itself where the kernel offers a pidfd (every close and restart
        # waits here for a shim that is about to exit, and a poll would oversleep the exit).
        with self._pidfd() as pidfd:
            while (remaining := deadline - time.monotonic()) > 0:
                if pidfd is not None:
                    select.select([pidfd], [], [], remaining)
                else:
                    time.sleep(min(0.01, remaining))
                if self._exited_now():
                    return True
        return self._exited_now()

    def _exited_now(self) -> bool:
        try:
            return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True  # already reaped

    @contextlib.contextmanager
    def _pidfd(self) -> Iterator[int | None]:
        """A descriptor that turns readable when the (unreaped) process exits; None where the
        platform has none (the caller polls instead)."""
        try:
            fd = os.pidfd_open(self.proc.pid)
        except (AttributeError, OSError):
            yield None
            return
        try:
            yield fd
        finally:
            os.close(fd)

    def killed_from_outside(self) -> bool:
        """It has exited, ended by a signal something else sends to stop a process (the OOM
        killer's SIGKILL, a user's SIGTERM), not by its own exit or crash."""
        try:
            info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # already reaped
            code = self.proc.returncode
            return code is not None and -code in OUTSIDE_SIGNALS
        return info is not None and info.si_code == os.CLD_KILLED and info.si_status in OUTSIDE_SIGNALS

    def wait_for_exit(self) -> None:
        """Block until the shim exits (not until its stdout closes); does not reap."""
        with contextlib.suppress(ChildProcessError):  # already reaped: it has exited
            os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOWAIT)

    def end_tree(self, sig: int) -> int:
        """Signal the group and every descendant; with SIGKILL, sweep until none is left.
        Returns how many descendants (besides the leader's group) were signalled."""
        with self._lock:
            leader = None
            if self.proc.returncode is None:  # not reaped: its group id cannot have been reused
                leader = self.proc.pid
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, sig)
        if sig == signal.SIGKILL:
            return process_tree.end_descendants(leader, self.token)
        found = process_tree.descendants(leader, self.token)
        process_tree.signal_all(found, sig)
        return len(found)

    def reap(self) -> int:
        with self._lock:
            return self.proc.wait()

    def terminate(self, grace: float) -> int:
        """Wait ``grace`` for a voluntary exit, then SIGTERM, then SIGKILL everything; reap."""
        if not self.exited(grace):
            self.end_tree(signal.SIGTERM)
            self.exited(TERM_GRACE_SECONDS)
        ended = self.end_tree(signal.SIGKILL)
        returncode = self.reap()
        if ended:  # something was alive to fork: sweep once more for a fork that raced the kill
            process_tree.end_descendants(None, self.token)
        return returncode


def exit_status(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by signal {-returncode} ({name})"
    return f"exited with code {returncode}"

"""Ending every process a shim started, including ones that left its process group.

A shim is often a wrapper (``sh -c``, ``go run``, ``npx``, a JVM launcher) and may start
helpers of its own; any of them can hold the shim's pipes open or outlive it. The harness
ends them all with the shim, by three means, each covering what the previous one misses:

1. **The process group.** The shim is spawned as a session/group leader, so ``killpg``
   reaches every descendant that did not move. Portable, and the only means off Linux.
2. **The process tree** (``/proc/*/stat`` parent links), walked from the shim while it
   has not been reaped: catches a child that moved to a new group or session.
3. **An instance token in the environment** (``TOOLNEXUS_SHIM_INSTANCE``, unique per
   shim process), read back from ``/proc/*/environ``: catches a descendant whose parent
   already exited, so it was re-parented away from the tree (the ``setsid`` + orphan
   case), however deep. Only a descendant that both scrubs its environment and escapes
   the tree before the shim ends evades it.

Why not the alternatives: ``PR_SET_CHILD_SUBREAPER`` would change the pytest process for
everybody (every orphan of any subprocess any test or plugin starts becomes a zombie of
ours, and reaping them with ``waitpid(-1)`` would steal exit statuses from
``subprocess``); a cgroup needs a delegated, writable cgroup v2 hierarchy, which neither
CI runners nor this container give an unprivileged harness (here: cgroup v1 only).
A ``/proc`` scan runs only when a shim ends (a few scans per shim, never per call). A shim
that exits while a ``setsid`` grandchild holds its stdout is reported soon after its exit,
not after the per-call timeout, and leaves no process behind. The fault suite
(tests/faults) counts leftovers after every fault.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass

TOKEN_VAR = "TOOLNEXUS_SHIM_INSTANCE"
PROC = "/proc"
MAX_ROUNDS = 50  # a fork bomb gets this many kill sweeps; each sweep kills what it sees


def new_token() -> str:
    """A value for :data:`TOKEN_VAR` that no other shim, here or in another worker, shares."""
    return f"{os.getpid()}-{secrets.token_hex(8)}"


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    ppid: int
    state: str


def _read_stat(pid: int) -> ProcInfo | None:
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as handle:
            raw = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    # "pid (comm) state ppid ..."; comm may hold spaces and parentheses: split at the last ")".
    fields = raw[raw.rfind(")") + 2 :].split()
    if len(fields) < 2:
        return None
    return ProcInfo(pid, int(fields[1]), fields[0])


def _has_token(pid: int, marker: bytes) -> bool:
    try:
        with open(f"{PROC}/{pid}/environ", "rb") as handle:
            return marker in handle.read().split(b"\0")
    except OSError:  # gone, or another user's process: not ours to judge
        return False


def _live_pids() -> list[ProcInfo]:
    try:
        names = os.listdir(PROC)
    except OSError:
        return []
    found = []
    for name in names:
        if name.isdigit():
            info = _read_stat(int(name))
            if info is not None and info.state not in {"Z", "X"}:  # zombies and the dead hold nothing
                found.append(info)
    return found


def descendants(leader: int | None, token: str | None) -> set[int]:
    """Live processes below ``leader`` (by parent links) or carrying ``token``; never us."""
    procs = _live_pids()
    found: set[int] = set()
    if leader is not None:
        children: dict[int, list[int]] = {}
        for info in procs:
            children.setdefault(info.ppid, []).append(info.pid)
        stack = list(children.get(leader, []))
        while stack:
            pid = stack.pop()
            if pid not in found:
                found.add(pid)
                stack.extend(children.get(pid, []))
    if token is not None:
        marker = f"{TOKEN_VAR}={token}".encode()
        found.update(info.pid for info in procs if info.pid not in found and _has_token(info.pid, marker))
    found.discard(os.getpid())
    if leader is not None:
        found.discard(leader)  # the leader is signalled and reaped by its owner
    return found


def signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def end_descendants(leader: int | None, token: str | None) -> int:
    """SIGKILL every descendant, sweep after sweep, until none is left; returns how many.

    A process forked between a scan and its parent's death shows up in the next scan (it
    inherited the token), so the loop ends only on a scan that finds nothing alive.
    """
    ended: set[int] = set()
    for _ in range(MAX_ROUNDS):
        found = descendants(leader, token)
        if not found:
            break
        signal_all(found, signal.SIGKILL)
        ended |= found
        time.sleep(0.005)  # a killed process stays "alive" in /proc until the kernel is done
    return len(ended)

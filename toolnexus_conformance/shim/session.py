"""A shim session: a :class:`ShimProcess` plus the ``initialize`` handshake and restarts.

The session owns what must hold across processes: the command line, the recorded
handshake, and the restart budget. After a crash, timeout or protocol error the process
is dead; the next call starts a fresh one and replays ``initialize`` (as Bowtie replays
``start``), so one broken test never takes the rest of the run with it. A shim speaking
another protocol version is refused once and for all — restarting cannot fix that.
When deliberate restarts are expected (scenarios that resume in a fresh shim), the next
processes are spawned ahead (spares), so a restart costs a handshake, not a shim's boot.
How a process is started is the session's :class:`Launcher`'s (a plain subprocess unless
the port registry chose another, :mod:`toolnexus_conformance.shim.launchers`); the launcher
also says whether starting ahead pays (a fork from a warm process is ready at once).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolnexus_conformance.helpers.errors import (
    ProtocolVersionMismatch,
    ShimCallError,
    ShimCrashed,
    ShimError,
    ShimNotRunning,
    ShimProtocolError,
    ShimRestartBudgetExceeded,
    ShimStartError,
    ShimTimeout,
)
from toolnexus_conformance.helpers.jsonrpc import ErrorCode, Params
from toolnexus_conformance.shim.child import ShimChild
from toolnexus_conformance.shim.launch import Launcher, PlainLauncher
from toolnexus_conformance.shim.process import HostHandler, ShimProcess, Validator

PROTOCOL_VERSION = 1
DEFAULT_RESTART_BUDGET = 20
# Processes spawned ahead of expected restarts (each an idle shim until used). Restarting
# variants come in runs (a scenario's variants, then the next such scenario) and a Python
# shim boots slower than a variant runs, so the stock covers one scenario's restarts.
SPARES_AHEAD = 6

# Failures after which the process cannot be trusted; the next call gets a fresh one.
_PROCESS_KILLING = (ShimCrashed, ShimTimeout, ShimProtocolError, ShimNotRunning, ShimStartError)


@dataclass(frozen=True)
class Handshake:
    """What the shim said about itself in answer to ``initialize``."""

    port: str
    language: str
    library_name: str
    library_version: str
    protocol_version: int
    capabilities: tuple[str, ...]
    raw: dict[str, Any]

    def supports(self, capability: str) -> bool:
        return capability in self.capabilities


class ShimSession:
    """A long-lived connection to one port's shim, restarted (within a budget) when it breaks."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        start_timeout: float = 10.0,
        restart_budget: int = DEFAULT_RESTART_BUDGET,
        validator: Validator | None = None,
        process: ShimProcess | None = None,
        launcher: Launcher | None = None,
    ) -> None:
        self.argv = list(argv)
        self.launcher = launcher if launcher is not None else PlainLauncher()
        self.cwd = cwd
        self.env = env
        self.start_timeout = start_timeout
        self.restart_budget = restart_budget
        self.process = process if process is not None else ShimProcess(validator=validator)
        self.handshake: Handshake | None = None
        self.starts = 0
        self.recoveries = 0  # restarts forced by a failure; deliberate restart() calls are free
        self._broken = False
        self._refused: ShimError | None = None  # a failure no restart can fix
        self._spares: list[ShimChild] = []  # spawned ahead for restarts, oldest first
        self._restarts_expected = 0

    @property
    def restarts(self) -> int:
        """How many times a fresh process replaced a previous one (for whatever reason)."""
        return max(0, self.starts - 1)

    @property
    def alive(self) -> bool:
        return self.handshake is not None and self.process.usable

    def ensure_alive(self) -> Handshake:
        """Return the handshake of a live shim, starting one and replaying ``initialize`` if needed."""
        if self._refused is not None:
            raise self._refused
        if self.alive:
            assert self.handshake is not None
            return self.handshake
        if self.handshake is not None:
            self._broken = True  # it died between calls
        if self._broken and self.recoveries >= self.restart_budget:
            raise ShimRestartBudgetExceeded(
                f"shim broke again after {self.recoveries} restarts (budget {self.restart_budget}); "
                "giving up on it for this run",
                command=self.argv, cwd=self.cwd, stderr_tail=self.process.stderr_tail(),
            )
        self.handshake = None
        self.process.close()
        if self._broken:
            self.recoveries += 1
        self._broken = True  # until the handshake succeeds
        self.starts += 1
        try:
            self.process.start(self.argv, cwd=self.cwd, env=self.env, spawned=self._take_spare(),
                               launcher=self.launcher)
        except ShimStartError as exc:
            self._refused = exc
            raise
        try:
            raw = self.process.call("initialize", {"protocolVersion": PROTOCOL_VERSION}, timeout=self.start_timeout)
            self.handshake = self._check_handshake(raw)
        except ShimError as exc:
            # Reap first: the stderr tail is complete only once the process is gone.
            self.process.close()
            if isinstance(exc, ShimCallError) and exc.code == ErrorCode.PROTOCOL_VERSION_MISMATCH:
                exc = self._mismatch(f"shim refused protocol version {PROTOCOL_VERSION}: {exc.message}")
            exc.stderr_tail = self.process.stderr_tail()
            if isinstance(exc, ProtocolVersionMismatch):
                self._refused = exc
            raise exc from None
        self._broken = False
        return self.handshake

    def call(self, method: str, params: Params = None, *, timeout: float, handler: HostHandler | None = None) -> Any:
        """One call on a live shim; a process-killing failure is raised and the next call restarts."""
        self.ensure_alive()
        try:
            return self.process.call(method, params, timeout=timeout, handler=handler)
        except _PROCESS_KILLING:
            self.handshake, self._broken = None, True
            raise

    def notify(self, method: str, params: Params = None) -> None:
        self.ensure_alive()
        self.process.notify(method, params)

    def restart(self) -> Handshake:
        """Replace the process on purpose (e.g. between halt and resume); not counted as a failure."""
        self.handshake = None
        self.process.close()
        self._restarts_expected = max(0, self._restarts_expected - 1)
        handshake = self.ensure_alive()
        self._stock_spares()  # the next restart's process boots while this one works
        return handshake

    def expect_restarts(self, count: int) -> None:
        """``count`` deliberate restarts will follow (the collected variants that resume in
        a fresh shim): keep up to :data:`SPARES_AHEAD` processes spawned ahead for them,
        so a restart finds its process started and only replays ``initialize``. A spare is
        a fresh process that has received nothing until it is taken over."""
        self._restarts_expected = max(0, count)
        self._stock_spares()

    def start_ahead(self) -> None:
        """The first call will come soon (the session is still collecting): spawn its
        process now, so the shim boots while pytest collects instead of after."""
        if self.handshake is None:
            self._stock_spares(at_least=1)

    def prepare_restart(self) -> None:
        """A restart is coming soon: spawn its process now, unless one is ready already."""
        if not self._spares:
            self._restarts_expected = max(self._restarts_expected, 1)
            self._stock_spares()

    def _stock_spares(self, at_least: int = 0) -> None:
        wanted = self.launcher.ahead(max(at_least, min(SPARES_AHEAD, self._restarts_expected)), self._restarts_expected)
        while self._refused is None and len(self._spares) < wanted:
            try:
                self._spares.append(self._spawn())
            except (OSError, ValueError):
                return  # the start that needs one spawns (and reports) for itself

    def _spawn(self) -> ShimChild:
        """A process of this session's command, started now by its launcher."""
        return self.launcher.spawn(self.argv, cwd=self.cwd, env=self.env)

    def _take_spare(self) -> ShimChild | None:
        while self._spares:
            spare = self._spares.pop(0)
            if not spare.exited() or not spare.killed_from_outside():
                # Alive, or it ended by itself before a word was said to it (a shim that
                # crashes at start): taken over, its start fails and is reported as any would.
                return spare
            _discard(spare)  # killed from outside while idle: the next one, or a fresh start
        return None

    def close(self) -> None:
        self.handshake = None
        self.process.close()
        self._restarts_expected = 0
        while self._spares:
            _discard(self._spares.pop())
        self.launcher.close()  # after the shims: a forked one's exit comes through its zygote

    def __enter__(self) -> ShimSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_handshake(self, raw: Any) -> Handshake:
        if not isinstance(raw, dict):
            raise self._bad(f"initialize result must be an object, got {type(raw).__name__}")
        version = raw.get("protocolVersion")
        if isinstance(version, bool) or not isinstance(version, int):
            raise self._bad(f"initialize result.protocolVersion must be an integer, got {version!r}")
        if version != PROTOCOL_VERSION:
            raise self._mismatch(
                f"shim speaks shim-protocol version {version}, this harness speaks {PROTOCOL_VERSION}; "
                "update the shim or the harness so they match"
            )
        for key in ("port", "language"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise self._bad(f"initialize result.{key} must be a non-empty string, got {raw.get(key)!r}")
        library = raw.get("library")
        if not isinstance(library, dict):
            raise self._bad(f"initialize result.library must be an object, got {library!r}")
        for key in ("name", "version"):
            if not isinstance(library.get(key), str) or not library[key]:
                raise self._bad(f"initialize result.library.{key} must be a non-empty string, got {library.get(key)!r}")
        capabilities = raw.get("capabilities")
        if not isinstance(capabilities, list) or not all(isinstance(c, str) for c in capabilities):
            raise self._bad(f"initialize result.capabilities must be a list of strings, got {capabilities!r}")
        return Handshake(
            port=raw["port"], language=raw["language"], library_name=library["name"],
            library_version=library["version"], protocol_version=version,
            capabilities=tuple(capabilities), raw=raw,
        )

    def _bad(self, reason: str) -> ShimProtocolError:
        return ShimProtocolError(f"bad handshake: {reason}", **self._context())

    def _mismatch(self, reason: str) -> ProtocolVersionMismatch:
        return ProtocolVersionMismatch(reason, **self._context())

    def _context(self) -> dict[str, Any]:
        return {"command": self.argv, "cwd": self.cwd, "stderr_tail": self.process.stderr_tail(),
                "method": "initialize"}


def _discard(child: ShimChild) -> None:
    """End a spare nobody spoke to: its stdin's EOF ends a shim that reads; the rest is
    terminate's (the process and everything it started, reaped)."""
    for stream in (child.proc.stdin, child.proc.stdout, child.proc.stderr):
        with contextlib.suppress(OSError, ValueError):
            if stream is not None:
                stream.close()
    child.terminate(grace=1.0)

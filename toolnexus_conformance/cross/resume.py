"""Cross-port resume: ``pytest --port=A --resume-port=B``.

Every variant with a durable halt (a scenario with a ``resume`` block) runs its halting
phase on port A and its resume phase on port B; B gets exactly what a durable host keeps:
the pending Request and the transcript (or, for askWithAnswer, the conversation A saved in
the host's store), as JSON over the shim protocol. Both are judged by the same checks,
goldens and normalization rows as a single-port run — a reference golden is the
reference's resume of the reference's halt, so where A's halt equals it, B's resume must
equal the reference's. ``cross_phases`` says which phase (and so which port) each failure
lies in; a failure is a known one when the expectations of the port that ran that phase
list it (``--expectations`` for A, ``--resume-expectations`` for B).

This module owns the options, their validation and the session-wide state (B's shim, the
tallies the summary and report show); ``cross_item`` runs and judges one variant;
``cross_report`` renders. Variants without a durable halt are deselected and counted.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.shim.launchers import port_session
from toolnexus_conformance.shim.ports import PortError, ResolvedPort, load_registry, resolve
from toolnexus_conformance.shim.session import Handshake, ShimSession
from toolnexus_conformance.verdict.expectations import Expectations, ExpectationsError, load

CROSS_KEY = pytest.StashKey["CrossResume"]()
REQUIRED_CAPABILITY = "resume"
ORACLE_PORT = "reference"


def add_options(group: Any) -> None:
    group.addoption(
        "--resume-port",
        help="cross-port resume: run each durable halt's resume phase on this port (the halt runs on --port)",
    )
    group.addoption("--resume-port-cmd", help="cross-port resume: start this command as the resuming port's shim")
    group.addoption("--resume-port-src", help="build the resuming port's shim against this toolnexus checkout")
    group.addoption(
        "--resume-expectations",
        help="the resuming port's expectations file: explains failures of the resume phase in a cross-port run",
    )


def requested(config: pytest.Config) -> bool:
    return bool(config.getoption("resume_port") or config.getoption("resume_port_cmd"))


@dataclass
class Counts:
    """How the cross-run variants came out (a variant counts once, by its worst rule)."""

    passed: int = 0
    expected: int = 0  # failed only as the ports' expectations say
    failed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (variant, why)


@dataclass(frozen=True)
class Difference:
    """One rule failing on one cross-run variant, placed in the phase (and port) it lies in."""

    variant: str
    rule: str
    level: str
    reason: str
    phase: str  # cross_phases.HALTING or RESUMING: whose port answers for it
    port: str
    phases: tuple[str, ...]
    how: str
    known: bool
    observed: str


@dataclass
class CrossResume:
    """Session-wide state of a cross-port run (one per pytest session)."""

    halting: ResolvedPort
    resuming: ResolvedPort
    halting_expectations: Expectations
    resuming_expectations: Expectations
    halting_src: bool
    resuming_src: bool
    resuming_selector: str
    validator: Callable[..., Any] | None = None
    counts: Counts = field(default_factory=Counts)
    differences: list[Difference] = field(default_factory=list)
    deselected: dict[str, list[str]] = field(default_factory=dict)  # scenario -> variant names
    resuming_handshake: dict[str, Any] | None = None  # kept for the report once the shim is closed
    _shim: ShimSession | None = None
    _reference: ShimSession | None = None

    @property
    def resumes_on_reference(self) -> bool:
        """The resuming port is the reference itself: its resume of any halt is the oracle."""
        return self.resuming.name == ORACLE_PORT and self.resuming.selector == f"--port={ORACLE_PORT}"

    def reference_shim(self) -> ShimSession:
        """The reference's shim, for the oracle run (``cross_oracle``), started on first use."""
        if self._reference is None:
            port = resolve(ORACLE_PORT, None, None, None, build=False)
            self._reference = port_session(port, validator=self.validator)
        return self._reference

    def shim(self) -> ShimSession:
        if self._shim is None:
            env = {**os.environ, **self.resuming.env} if self.resuming.env else None
            self._shim = port_session(self.resuming, env=env, validator=self.validator)
        return self._shim

    def handshake(self) -> Handshake:
        return self.shim().ensure_alive()

    def close(self) -> None:
        if self._shim is not None:
            if self._shim.handshake is not None:
                self.resuming_handshake = self._shim.handshake.raw
            self._shim.close()
        if self._reference is not None:
            self._reference.close()

    def expectations_of(self, phase: str) -> Expectations:
        from toolnexus_conformance.cross.phases import HALTING

        return self.halting_expectations if phase == HALTING else self.resuming_expectations

    def port_of(self, phase: str) -> str:
        from toolnexus_conformance.cross.phases import HALTING

        return self.halting.name if phase == HALTING else self.resuming.name

    def selector(self) -> str:
        return f"{self.halting.selector} {self.resuming_selector}"


def configure(config: pytest.Config, halting: ResolvedPort, halting_expectations: Expectations) -> CrossResume:
    """Validate the cross-run options and build the resuming port; misuse is a UsageError."""
    if config.getoption("update_expectations"):
        raise pytest.UsageError(
            "--update-expectations is not used with --resume-port: a cross-port run records no expectations "
            "(each port's file comes from its own single-port run)"
        )
    if config.getoption("update_snapshots", default=False):
        raise pytest.UsageError("--snapshot-update is not used with --resume-port: goldens come from the reference alone")
    if _distributed(config):
        raise pytest.UsageError("--resume-port runs in one process: drop -n/--dist (xdist) for a cross-port run")
    name, cmd = config.getoption("resume_port"), config.getoption("resume_port_cmd")
    src = config.getoption("resume_port_src")
    if src is None and name == halting.name and config.getoption("port_src"):
        src = config.getoption("port_src")  # the same port on both sides: the same checkout
    try:
        resuming = resolve(name, cmd, src, config.getoption("port_timeout"), build=True)
        expectations_path = config.getoption("resume_expectations")
        if expectations_path and not Path(expectations_path).is_file():
            raise ExpectationsError(f"{expectations_path}: no such expectations file")
        resuming_expectations = load(Path(expectations_path)) if expectations_path else load(None)
        resuming_expectations.check_port(resuming.expectations_port)
    except (PortError, ExpectationsError) as exc:
        raise pytest.UsageError(str(exc).replace("--port-src", "--resume-port-src")) from None
    registry = load_registry()
    selector = resuming.selector.replace("--port-cmd=", "--resume-port-cmd=").replace("--port-src=", "--resume-port-src=")
    selector = selector.replace("--port=", "--resume-port=", 1)
    if cmd and name:
        selector = f"--resume-port={name} {selector}"
    return CrossResume(
        halting=halting,
        resuming=resuming,
        halting_expectations=halting_expectations,
        resuming_expectations=resuming_expectations,
        halting_src=bool(halting.name in registry and registry[halting.name].needs_source),
        resuming_src=bool(resuming.name in registry and registry[resuming.name].needs_source),
        resuming_selector=selector,
    )


def _distributed(config: pytest.Config) -> bool:
    workers = config.getoption("numprocesses", default=None)
    return bool(workers) or hasattr(config, "workerinput") or config.getoption("dist", default="no") not in (None, "no")


def refusal(halting: Handshake, resuming: Handshake, halting_name: str, resuming_name: str) -> str | None:
    """Why no cross-port resume can run between these two shims (None when it can)."""
    missing = [
        f"port {name!r} does not declare the {REQUIRED_CAPABILITY!r} capability (it declares {', '.join(h.capabilities) or 'none'})"
        for name, h in ((halting_name, halting), (resuming_name, resuming))
        if not h.supports(REQUIRED_CAPABILITY)
    ]
    if not missing:
        return None
    return (
        "cross-port resume refused: " + "; ".join(missing)
        + ". A durable halt can only be handed from a port that halts to one that resumes."
    )

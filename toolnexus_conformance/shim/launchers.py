"""The launch strategies by name, and the session for a resolved port.

A registered port's ``launch`` (``ports.toml``, carried by :class:`ResolvedPort`) names how
its shims are started: ``plain`` (:class:`PlainLauncher`, the default, a subprocess each)
or ``forked`` (:class:`ForkedLauncher`, forked from a warm zygote). This is the one place
that turns the name into a launcher; ``--port-cmd`` ports, mutants and every real port are
plain. :func:`port_session` is how the harness opens a session on a port.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from toolnexus_conformance.shim.forked import ForkedLauncher
from toolnexus_conformance.shim.launch import Launcher, PlainLauncher
from toolnexus_conformance.shim.ports import FORKED, LAUNCHES, PLAIN, PortError, ResolvedPort
from toolnexus_conformance.shim.process import ShimProcess, Validator
from toolnexus_conformance.shim.session import ShimSession

__all__ = ["LAUNCHERS", "launcher_for", "port_session"]

LAUNCHERS: dict[str, Callable[[ResolvedPort, Mapping[str, str] | None], Launcher]] = {
    PLAIN: lambda port, env: PlainLauncher(),
    FORKED: lambda port, env: ForkedLauncher(port.argv, env=env, socket_path=port.fork_server),
}
assert set(LAUNCHERS) == set(LAUNCHES), "every launch the registry accepts has a launcher"


def launcher_for(port: ResolvedPort, env: Mapping[str, str] | None = None) -> Launcher:
    """The launcher of ``port``'s shims (``env``: the environment they start with)."""
    make = LAUNCHERS.get(port.launch)
    if make is None:
        raise PortError(f"port {port.name!r} has launch = {port.launch!r}; "
                        f"a launch is one of: {', '.join(repr(k) for k in LAUNCHES)}")
    return make(port, env)


def port_session(port: ResolvedPort, *, env: Mapping[str, str] | None = None, validator: Validator | None = None,
                 keep_transcript: bool = True) -> ShimSession:
    """A session on ``port``'s shim, started by the port's launcher. ``env`` is the whole
    environment its shims start with (None: this process's); ``keep_transcript`` false
    keeps none (a differential search shows none)."""
    process = ShimProcess(validator=validator, keep_transcript=keep_transcript)
    return ShimSession(port.argv, env=env, process=process, launcher=launcher_for(port, env))

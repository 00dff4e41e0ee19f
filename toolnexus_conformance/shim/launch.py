"""The launch seam: how a session's shim processes are started and what that costs.

A :class:`Launcher` starts a shim process onto fresh pipes (:meth:`Launcher.spawn`, a
:class:`ShimChild`), says how many processes are worth starting ahead of deliberate
restarts (:meth:`Launcher.ahead`), and stops whatever it runs besides the shims
(:meth:`Launcher.close`). :class:`ShimSession` takes one; :class:`PlainLauncher`, a plain
subprocess per shim, is the default and what every port a maintainer gates runs on. Which
launcher a registered port gets is the registry's choice (``launch`` in ``ports.toml``,
:mod:`toolnexus_conformance.shim.launchers`), never a guess from its command line.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence

from toolnexus_conformance.shim.child import ShimChild

__all__ = ["Launcher", "PlainLauncher"]


class Launcher(ABC):
    """Starts a session's shim processes; one launcher serves one session."""

    @abstractmethod
    def spawn(self, argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str] | None) -> ShimChild:
        """A fresh shim process of ``argv`` on pipes of its own, that has served nothing;
        raises OSError or ValueError when it cannot be started at all."""

    def ahead(self, wanted: int, restarts: int) -> int:
        """How many of ``wanted`` processes the session should start ahead, ``restarts``
        deliberate restarts being announced; a launcher may prepare for them now."""
        return wanted

    def close(self) -> None:  # noqa: B027 - a launcher that runs nothing besides its shims stops nothing
        """Stop what the launcher runs besides the shims (after the session's shims)."""


class PlainLauncher(Launcher):
    """Each shim a plain subprocess of its command (a process-group leader, see ShimChild)."""

    def spawn(self, argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str] | None) -> ShimChild:
        return ShimChild(argv, cwd=cwd, env=env)

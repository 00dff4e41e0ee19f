"""A conformance session's restarted reference shims, forked from a warm zygote instead of
booted cold.

The reference port (``reference``, ``reference-norelay``: ``{python} shims/reference/shim.py
[--no-relay]``) starts a fresh shim for every variant that resumes in a restarted process;
a cold start pays the interpreter and its imports, a fork of a process that has them
loaded only the fork. The zygote (shim/zygote.py on shim/fork_server.py, as the
differential uses it) costs one cold start, so it is launched only once a session wants a
second process: a session that starts one shim pays what it paid (its first shim is started
cold, ahead while pytest collects as before), and one that restarts pays one start more for
all its restarts (``pytest --port=reference`` has a dozen variants that resume in a fresh
process).

:class:`WarmShimSession` launches the zygote when the first restart is announced (it boots
while the current shim works), forks each later process from it when it is asked for (no
spare idles ahead: a fork is ready at once), each a fresh process that has served nothing,
on pipes of its own, with the session's environment and its own instance token
(``ForkedChild``), and stops it with the session. When the zygote does not come up or cannot
be reached, processes are started cold and spawned ahead as for any other port: slower,
never different.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence

from toolnexus_conformance.shim import fork_server
from toolnexus_conformance.shim.child import ShimChild
from toolnexus_conformance.shim.forked import ForkedChild
from toolnexus_conformance.shim.process import Validator
from toolnexus_conformance.shim.session import ShimSession
from toolnexus_conformance.shim.warm_ports import READY_TIMEOUT_S, STOP_TIMEOUT_S, reference_shim, zygote_command


class WarmShimSession(ShimSession):
    """A session of the reference shim whose processes its zygote forks (cold when it cannot)."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 validator: Validator | None = None) -> None:
        super().__init__(argv, env=env, validator=validator)
        self._zygote: subprocess.Popen[bytes] | None = None
        self._folder: str | None = None
        self._socket_path = ""  # the zygote's, once launched
        self._ready = False
        self._cold = False  # the zygote did not come up: every start is cold from then on

    @property
    def zygote(self) -> subprocess.Popen[bytes] | None:
        """The zygote process while it is launched (None before, after close, or cold)."""
        return self._zygote

    def _stock_spares(self, at_least: int = 0) -> None:
        if self.starts == 0 or self._cold:
            super()._stock_spares(at_least)  # the first process, or no zygote: cold, ahead
        elif max(at_least, self._restarts_expected) > 0:
            self._launch()  # boots while the current shim works; restarts fork from it

    def _take_spare(self) -> ShimChild | None:
        spare = super()._take_spare()
        if spare is not None or self.starts <= 1:  # (counted already) the first start is cold
            return spare
        return self._forked()

    def _forked(self) -> ForkedChild | None:
        socket_path = self._socket()
        if socket_path is None:
            return None
        try:
            return ForkedChild(socket_path, self.argv[1:], cwd=self.cwd, env=self.env)
        except OSError:
            return None  # gone since (killed): this start is cold, ShimProcess's own

    def _launch(self) -> None:
        if self._zygote is not None or self._cold:
            return
        self._folder = tempfile.mkdtemp(prefix="tn-shims-")
        command = zygote_command(list(self.argv), self._folder)
        assert command is not None, "a warm session runs the reference shim"
        argv, self._socket_path = command
        self._zygote = fork_server.launch(argv, env={**(os.environ if self.env is None else self.env)})
        if self._zygote is None:
            self._go_cold()

    def _socket(self) -> str | None:
        """The serving zygote's socket, launching and awaiting it first; None: start cold."""
        self._launch()
        if self._zygote is None or self._folder is None:
            return None
        if not self._ready:
            self._ready = fork_server.wait_ready(self._zygote, READY_TIMEOUT_S)
            if not self._ready:  # (wait_ready stopped it)
                self._zygote = None
        if self._zygote is not None and self._zygote.poll() is not None:
            fork_server.stop(self._zygote, STOP_TIMEOUT_S)  # gone since (killed): reaped
            self._zygote = None
        if self._zygote is None:
            self._go_cold()
            return None
        return self._socket_path

    def _go_cold(self) -> None:
        self._cold = True
        self._remove_folder()

    def _remove_folder(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def close(self) -> None:
        super().close()  # the shims first: each one's exit status comes through the zygote
        if self._zygote is not None:
            fork_server.stop(self._zygote, STOP_TIMEOUT_S)
            self._zygote, self._ready = None, False
        self._remove_folder()


def shim_session(argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 validator: Validator | None = None) -> ShimSession:
    """The session for a port's shim: warm for the reference shim, an ordinary one otherwise."""
    if reference_shim(list(argv)) is not None:
        return WarmShimSession(argv, env=env, validator=validator)
    return ShimSession(argv, env=env, validator=validator)

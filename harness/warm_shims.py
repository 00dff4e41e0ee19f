"""A conformance session's reference shims, forked from a warm zygote instead of booted cold.

The reference port (``reference``, ``reference-norelay``: ``{python} shims/reference/shim.py
[--no-relay]``) starts a fresh shim for every variant that resumes in a restarted process,
and spares ahead of those; a cold start pays the interpreter and its imports (~0.13 s of
CPU), a fork of a process that has them loaded ~0.012 s. The zygote (differential_zygote.py
on fork_server.py, as the differential uses it) is itself one cold start, so a session that
starts a single shim pays what it paid, and every further shim, spare or restart, is nearly
free: ``pytest --port=reference`` starts 13 shims (12 variants resume in a fresh process).

:class:`WarmShimSession` launches the zygote on first need (or ahead, while pytest
collects), forks each process of the session from it (``ForkedChild``: a fresh process that
has served nothing, on pipes of its own, with the session's environment and its own instance
token) and stops it with the session. When the zygote does not come up or cannot be
reached, the process is started cold, as any other port's: slower, never different.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence

from . import fork_server
from .differential_forked import ForkedChild
from .differential_warm import READY_TIMEOUT_S, STOP_TIMEOUT_S, ZYGOTE, reference_shim
from .shim_child import ShimChild
from .shim_process import Validator
from .shim_session import ShimSession


class WarmShimSession(ShimSession):
    """A session of the reference shim whose processes its zygote forks (cold when it cannot)."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 validator: Validator | None = None) -> None:
        super().__init__(argv, env=env, validator=validator)
        self._zygote: subprocess.Popen[bytes] | None = None
        self._folder: str | None = None
        self._ready = False
        self._cold = False  # the zygote did not come up: every start is cold from then on

    @property
    def zygote(self) -> subprocess.Popen[bytes] | None:
        """The zygote process while it is launched (None before, after close, or cold)."""
        return self._zygote

    def start_ahead(self) -> None:
        """The first call will come soon: launch the zygote now, so it boots while pytest
        collects; the first shim is forked when asked for."""
        if self.handshake is None:
            self._launch()

    def _spawn(self) -> ShimChild:
        return self._forked() or super()._spawn()

    def _take_spare(self) -> ShimChild | None:
        return super()._take_spare() or self._forked()

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
        shim = reference_shim(self.argv)
        assert shim is not None, "a warm session runs the reference shim"
        self._folder = tempfile.mkdtemp(prefix="tn-shims-")
        env = {**(os.environ if self.env is None else self.env)}
        argv = [self.argv[0], str(ZYGOTE), os.path.join(self._folder, "zygote.sock"), shim, *self.argv[2:]]
        self._zygote = fork_server.launch(argv, env=env)
        if self._zygote is None:
            self._go_cold()

    def _socket(self) -> str | None:
        """The serving zygote's socket, launching and awaiting it first; None: start cold."""
        self._launch()
        if self._zygote is None or self._folder is None:
            return None
        if not self._ready:
            self._ready = fork_server.wait_ready(self._zygote, READY_TIMEOUT_S)
            if not self._ready:  # wait_ready stopped it
                self._zygote = None
                self._go_cold()
                return None
        if self._zygote.poll() is not None:
            return None
        return os.path.join(self._folder, "zygote.sock")

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

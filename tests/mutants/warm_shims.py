"""The shims of a series of kill runs: the mutants' zygote and the baseline's, started,
waited for, stopped and reaped.

``mutant_shims()`` starts ``shim_zygote.py`` on a private Unix socket, from which every
mutant shim of the series is forked by the product's ``forked`` launch
(``toolnexus_conformance/shim/forked.py``), and warms the baseline (the registry's
reference-norelay, ``forked`` too) with a zygote the series shares (``warm_ports``). On exit
both zygotes stop, ending and reaping any shim still alive. A zygote that does not come up
leaves its shims cold, said on stderr: slower, never wrong.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from kill_runner import ROOT, MutantShims, cold_baseline

from toolnexus_conformance.shim import fork_server
from toolnexus_conformance.shim.forked import warm_ports

HERE = Path(__file__).resolve().parent
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0


@contextlib.contextmanager
def mutant_shims() -> Iterator[MutantShims]:
    with tempfile.TemporaryDirectory(prefix="mz-") as folder, contextlib.ExitStack() as stack:
        socket_path = Path(folder) / "zygote.sock"
        zygote = fork_server.start([sys.executable, str(HERE / "shim_zygote.py"), str(socket_path)],
                                   cwd=ROOT, ready_timeout_s=START_TIMEOUT_S)
        if zygote is None:
            print("mutant shim zygote did not start: the kill runs start cold shims", file=sys.stderr)
        else:
            stack.callback(fork_server.stop, zygote, STOP_TIMEOUT_S)
        (baseline,) = warm_ports([cold_baseline()], stack)
        yield MutantShims(str(socket_path) if zygote is not None else "", baseline)

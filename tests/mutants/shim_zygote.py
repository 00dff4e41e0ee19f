"""A warm start for mutant shims: ``python tests/mutants/shim_zygote.py SOCKET``.

A mutant shim started as ``python tests/mutants/mutant_shim.py NAME`` spends most of its
start importing the reference shim, reference_py and its HTTP stack before it reads a line,
and a scoped mutant pass starts well over a hundred of them. This program imports all of that once, then
serves as the harness's fork server (``toolnexus_conformance/shim/fork_server.py``) on the Unix socket
``SOCKET``: each child, forked for a session whose port starts ``mutant_shim.py NAME
[--no-relay]`` with the ``forked`` launch (``kill_runner.MutantShims``), applies that mutant
to its own copy of the shim module and serves shim protocol v1, exactly as ``mutant_shim.py``
does.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import mutant_shim  # noqa: E402

from toolnexus_conformance.shim.fork_server import ForkServer  # noqa: E402


def preload() -> tuple[dict[str, Any], ModuleType]:
    """The catalogue and a pristine reference shim module, with what its first run imports.

    The fast HTTP client installed, as the reference shim's own zygote installs it. Not
    ``reference_py.relay``: a client with relay off must run with it never imported, so
    each child imports it on its own when its mutant runs with relay (on its first run).
    """
    from catalog import load

    shim = mutant_shim.load_reference_shim()
    # The reference shim's fast HTTP client, as its own zygote installs it
    # (toolnexus_conformance/shim/zygote.py): the same requests on less CPU per run.
    sys.path.insert(0, str(mutant_shim.ROOT / "shims" / "reference"))
    import fast_http

    fast_http.install()
    return load(), shim


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: shim_zygote.py SOCKET", file=sys.stderr)
        return 2
    mutants, shim = preload()

    def become(args: list[str]) -> int:
        shim_argv = list(args)  # SCRIPT NAME [--no-relay], as mutant_shim.py gets its argv
        sys.argv = shim_argv
        return mutant_shim.serve_loaded(shim_argv, mutants, shim)

    ForkServer(argv[1], become, name="mutant shim").run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

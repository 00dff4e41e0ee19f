"""A warm start for the reference shim in a differential search:
``python toolnexus_conformance/shim/zygote.py SOCKET SHIM [--no-relay]``.

A generated scenario that resumes in a restarted shim (``restartShim``) boots a fresh
reference shim for each port, and a boot is ~0.1 s of CPU (the interpreter, asyncio,
reference_py) against ~4 ms for serving a scenario: at ~3 restarts per 100 scenarios the
boots cost a quarter of a search's CPU. This program imports the shim script ``SHIM`` once,
does its warm-up, then serves as a fork server (``shim/fork_server.py``) on the Unix socket
``SOCKET``: each child becomes the shim, exactly as ``python SHIM [--no-relay]`` would run
(its ``main()``), a fresh process that has served nothing before. A conformance session's
restarts of the reference shim are forked from it too (shim/warm_session.py).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script, by path

from toolnexus_conformance.shim.fork_server import ForkServer  # noqa: E402


def load_shim(path: str, args: list[str]) -> ModuleType:
    """The shim script as a module, warmed up as its ``serve`` would before the first request."""
    spec = importlib.util.spec_from_file_location("differential_warm_shim", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the shim script {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.warm_up(relay="--no-relay" not in args)
    return module


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: shim/zygote.py SOCKET SHIM [shim arguments]", file=sys.stderr)
        return 2
    socket_path, shim_path, args = argv[1], argv[2], argv[3:]
    shim = load_shim(shim_path, args)

    def become(_: list[str]) -> int:
        sys.argv = [shim_path, *args]
        shim.main()  # ends with os._exit once shutdown is answered
        return 0

    ForkServer(socket_path, become, name="reference shim").run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

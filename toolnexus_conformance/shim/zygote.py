"""The warm process the reference shim is forked from (the ``forked`` launch,
``shim/forked.py``): ``python toolnexus_conformance/shim/zygote.py SOCKET SHIM [--no-relay]``.

It loads the shim script ``SHIM`` once, does what the shim's first run would do on its way,
applies the tunings that pay for a harness that starts and drives many reference shims, then
serves as a fork server (``shim/fork_server.py``) on the Unix socket ``SOCKET``: each child
runs the shim's ``main()`` exactly as ``python SHIM [--no-relay]`` would, a fresh process
that has served nothing before, and ends with the fork server's ``os._exit`` once ``main()``
returns (no interpreter teardown).

The tuning lives here, in a process the harness owns, not in the shim a port author copies:
reference_py's HTTP client becomes the fast one beside the shim (``shims/reference/fast_http``,
installed through ``reference_py.transport``). What it is worth, and what the tunings left
out would be, is in benchmarks/README.md.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script, by path

from toolnexus_conformance.shim.fork_server import ForkServer  # noqa: E402


def load_shim(path: str) -> ModuleType:
    """The shim script as a module (its imports done), not yet serving."""
    spec = importlib.util.spec_from_file_location("forked_reference_shim", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the shim script {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def tune(shim_path: str, args: list[str]) -> None:
    """Apply the tuning to this process, which every forked shim inherits."""
    sys.path.insert(0, str(Path(shim_path).resolve().parent))  # fast_http, beside the shim
    import fast_http  # type: ignore[import-not-found]  # found on the path set above

    fast_http.install()
    if "--no-relay" not in args:
        # What a relay client's first run imports; never for a no-relay shim, whose clients
        # must run with the relay extension never imported.
        import reference_py.relay  # noqa: F401


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: shim/zygote.py SOCKET SHIM [shim arguments]", file=sys.stderr)
        return 2
    socket_path, shim_path, args = argv[1], argv[2], argv[3:]
    shim = load_shim(shim_path)
    tune(shim_path, args)

    def become(_: list[str]) -> int:
        sys.argv = [shim_path, *args]
        shim.main()
        return 0

    ForkServer(socket_path, become, name="reference shim").run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

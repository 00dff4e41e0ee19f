"""A mutant of the reference shim: ``python tests/mutants/mutant_shim.py NAME [--no-relay]``.

Loads ``shims/reference/shim.py`` as a module (without running it), applies the one
broken behaviour the catalogue calls NAME, and serves shim protocol v1 on stdio exactly
as the reference shim does. Test-only: the product never imports this.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))


def load_reference_shim() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reference_shim", ROOT / "shims" / "reference" / "shim.py")
    if spec is None or spec.loader is None:
        raise SystemExit("mutant shim: cannot load shims/reference/shim.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def chosen_mutant(argv: list[str], mutants: dict[str, Any]) -> Any | None:
    """The mutant ``argv`` names, or None after saying on stderr what was expected."""
    names = [a for a in argv[1:] if not a.startswith("--")]
    if len(names) != 1 or names[0] not in mutants:
        print(f"mutant shim: expected one mutant name, one of: {', '.join(sorted(mutants))}", file=sys.stderr)
        return None
    return mutants[names[0]]


def serve_mutant(argv: list[str], chosen: Any, shim: ModuleType) -> int:
    """Apply ``chosen`` to ``shim`` (a freshly loaded reference shim) and serve on stdio."""
    chosen.patch(shim)
    relay = chosen.relay and "--no-relay" not in argv[1:]
    print(f"mutant shim: {chosen.name}: {chosen.description}", file=sys.stderr, flush=True)
    asyncio.run(shim.serve(relay=relay))
    return 0


def serve_loaded(argv: list[str], mutants: dict[str, Any], shim: ModuleType) -> int:
    """The shim for ``argv`` from an already loaded catalogue and shim module (the zygote's)."""
    chosen = chosen_mutant(argv, mutants)
    return 2 if chosen is None else serve_mutant(argv, chosen, shim)


def main(argv: list[str]) -> int:
    from catalog import load

    chosen = chosen_mutant(argv, load())
    if chosen is None:
        return 2
    return serve_mutant(argv, chosen, load_reference_shim())


if __name__ == "__main__":
    sys.exit(main(sys.argv))

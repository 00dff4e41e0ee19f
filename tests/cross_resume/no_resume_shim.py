"""The reference shim declaring every capability but ``resume``: a port that cannot take
over a durable halt. ``python tests/cross_resume/no_resume_shim.py``. Test-only."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    spec = importlib.util.spec_from_file_location("reference_shim", ROOT / "shims" / "reference" / "shim.py")
    if spec is None or spec.loader is None:
        raise SystemExit("no_resume_shim: cannot load shims/reference/shim.py")
    shim = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = shim
    spec.loader.exec_module(shim)
    shim.CAPABILITIES = [c for c in shim.CAPABILITIES if c != "resume"]
    asyncio.run(shim.serve(relay=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The command that reruns one failing variant, printed under its failure.

A pytest node id is relative to the rootdir, and a port repository running the installed
harness has its own rootdir, outside which the scenario files live (in site-packages): a
node id printed as is names a file that does not exist from there. The command therefore
names the scenario file by its absolute path and the variant by its item name, so it selects
the same variant from whatever folder it is run, and it repeats the options that choose the
port, its expectations and the fixtures tree.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

FIXTURES_ENV = "TOOLNEXUS_CONFORMANCE_FIXTURES"


def rerun_command(item: pytest.Item, selector: str, expectations: Path | None = None) -> str:
    """``python -m pytest "<abs scenario path>::<variant item>" <port options>``, runnable anywhere."""
    target = f"{Path(item.path).absolute()}::{item.name}"
    parts = ["python", "-m", "pytest", shlex.quote(target), selector]
    if expectations is not None:
        parts.append(shlex.quote(f"--expectations={expectations.absolute()}"))
    fixtures = os.environ.get(FIXTURES_ENV)
    if fixtures:
        # The harness reads goldens from this tree; without it the rerun would judge another oracle.
        parts.insert(0, f"{FIXTURES_ENV}={shlex.quote(str(Path(fixtures).absolute()))}")
    return " ".join(p for p in parts if p)

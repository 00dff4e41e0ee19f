"""Release history on a real release (toolnexus_conformance/reports/history.py): toolnexus 0.21.0
of the python port from the package index, one scenario. A gate: it installs from the index
and runs a real port, as the other gates do; tests/test_history.py holds the table builder's
and release selection's tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolnexus_conformance.shim.ports import cache_dir


@pytest.mark.timeout(900)
@pytest.mark.slow
def test_one_real_python_release(tmp_path: Path) -> None:
    """toolnexus 0.21.0 from the package index, one scenario: the table shows it ran, its
    capabilities, and a rule it passes.

    The release's venv lives in the harness's own build cache, as for a user's history run:
    built on the first run (and whenever its requirements change), reused after that.
    """
    cache = cache_dir()
    env = {**os.environ, "TOOLNEXUS_CONFORMANCE_CACHE": str(cache)}
    done = subprocess.run(
        [sys.executable, "-m", "toolnexus_conformance.reports.history", "--port=python", "--releases=0.21.0", "-o", str(tmp_path / "h.md"),
         "--", "-k", "loop-plain-answer"],
        check=False, capture_output=True, text=True, timeout=850, env=env,
    )  # fmt: skip
    if done.returncode == 2 and "cannot list toolnexus's releases" in done.stderr:
        pytest.skip(f"the package index is not reachable: {done.stderr.strip()[-300:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    table = (tmp_path / "h.md").read_text(encoding="utf-8")
    assert "| 0.21.0 | yes | toolnexus 0.21.0 | openai, anthropic, stream, store, hooks, register, resultMetadata |" in table
    assert "| `loop.final-text` | normative | 0.21.0 | — |" in table
    assert str(tmp_path) not in table and str(cache) not in table
